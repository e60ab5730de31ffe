import 'server-only';
// The lab's timeline: every step of every payment request, published to a Redis stream that every app
// instance writes to and every open lab tab reads from. Publishing never slows down or fails a payment.
import { randomBytes } from 'node:crypto';
import { getRedis } from '../redis.ts';
import type { TimelineEvent } from './timeline-event.ts';

export const TIMELINE_KEY = 'lab:timeline';
const MAX_EVENTS = 2_000;

export function publishTimelineEvent(event: TimelineEvent): void {
  getRedis()
    .xadd(TIMELINE_KEY, 'MAXLEN', '~', MAX_EVENTS, '*', 'event', JSON.stringify(event))
    .catch((error: Error) => console.error(`[timeline] not published: ${error.message}`));
}

export type Lane = {
  requestId: string;
  /** Records a step that took the time since the previous mark. */
  mark(step: TimelineEvent['step'], decision: string, detail?: string): void;
};

/** A request's lane on the timeline; each mark measures the time since the previous one. */
export function startLane(
  base: Pick<TimelineEvent, 'orderNo' | 'channel' | 'instance'>,
  publish: (event: TimelineEvent) => void = publishTimelineEvent,
): Lane {
  const requestId = randomBytes(6).toString('hex');
  let last = performance.now();
  return {
    requestId,
    mark(step, decision, detail) {
      const now = performance.now();
      publish({ ...base, requestId, step, decision, detail, durationMs: Math.round(now - last), at: Date.now() });
      last = now;
    },
  };
}
