// One step of one payment request, as the lab's timeline shows it. Pure types, shared with the browser.
import type { Layer } from '../defences/layers.ts';
import type { Decision } from '../telemetry/decisions.ts';

/** Layer 0's step is the browser's: a click it swallowed, reported by the page (POST /api/lab/timeline). */
export type TimelineStep =
  | Layer
  | 'pendingUi'
  | 'request'
  | 'bank'
  | 'reconcile'
  | 'outcome'
  | 'gateway'
  | 'receipt'
  | 'redis';

export type TimelineEvent = {
  /** One lane per request. */
  requestId: string;
  orderNo: string;
  /** `redis`: the Redis server changed under an app instance (lib/lab/redis-failover.ts): everyone's lab shows it. */
  channel: 'browser' | 'api' | 'queue' | 'reconciler' | 'gateway' | 'worker' | 'redis';
  /** Which app instance handled it (cluster mode shows two). */
  instance: string;
  step: TimelineStep;
  /** What the step decided: "passed", "stopped", "off", "charged", ... (every screen words each one). */
  decision: Decision;
  /** Why, in words a workshop can read: in English (the API's, the logs'; rendered from `reason` when there is one). */
  detail?: string;
  /**
   * Why, as a message of messages/<locale>/timeline.json (`timeline.reasons.<key>`) and its values: the lab
   * shows it in the reader's language. Absent on events from before reasons were messages: the lab shows `detail`.
   */
  reason?: { key: string; values?: Record<string, string | number> };
  durationMs: number;
  at: number;
  /**
   * Whose lab shows this lane: short hashes of the caller that sent the request and of the order's owner
   * (lib/lab/timeline.ts `viewerOf`). Each attendee sees their own lanes; the presenter's room, everyone's.
   */
  viewers?: string[];
};

/** What every step of one lane shares. */
export type LaneBase = Pick<TimelineEvent, 'requestId' | 'orderNo' | 'channel' | 'instance' | 'viewers'>;

/** One step of a lane, as stored: [durationMs, at, step, decision, reason?]. */
export type StoredStep = [number, number, TimelineStep, Decision, TimelineEvent['reason']?];

/**
 * Steps of one lane as the span processor publishes them: what they share once, then each step as a tuple,
 * a third of the bytes of as many TimelineEvents (the lab's cost on every payment: bench/results.md).
 */
export type LanePiece = { lane: LaneBase; steps: StoredStep[] };

/** A lane's pieces as the events every screen reads. */
export function eventsOfPiece({ lane, steps }: LanePiece): TimelineEvent[] {
  return steps.map(([durationMs, at, step, decision, reason]) => {
    const event: TimelineEvent = { ...lane, step, decision, durationMs, at };
    if (reason) event.reason = reason;
    return event;
  });
}
