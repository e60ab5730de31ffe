// Helpers for the integration tests of the lab's timeline: a lane of one step, as the checkout's report of a
// click the pending UI swallowed makes (lib/lab/swallowed-click.ts).
import { randomUUID } from 'node:crypto';
import type { TimelineEvent } from '@/lib/lab/timeline-event';

/** A swallowed click on `orderNo`, in the lab of `viewer` (and the room's). */
export function clickOf(viewer: string, orderNo: string): TimelineEvent {
  return {
    requestId: randomUUID(),
    orderNo,
    channel: 'browser',
    instance: 'test',
    step: 'pendingUi',
    decision: 'stopped',
    durationMs: 0,
    at: Date.now(),
    viewers: [viewer],
  };
}
