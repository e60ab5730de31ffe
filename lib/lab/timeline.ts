import 'server-only';
// The lab's timeline: every step of every payment request, published to a Redis stream that every app
// instance writes to and every open lab tab reads from. Publishing never slows down or fails a payment.
import { createHash, randomBytes } from 'node:crypto';
import { env } from '../env.ts';
import { getRedis } from '../redis.ts';
import { englishDetail, type TimelineReason } from './reasons.ts';
import type { TimelineEvent } from './timeline-event.ts';

export const TIMELINE_KEY = 'lab:timeline';
const MAX_ENTRIES = 1_000;

/** How long a process gathers lanes before it publishes them together (a lab tab polls every 700 ms). */
const BATCH_MS = 25;
let gathered: TimelineEvent[] = [];
let publishing: NodeJS.Timeout | undefined;

function append(events: TimelineEvent[]): Promise<void> {
  return getRedis()
    .xadd(TIMELINE_KEY, 'MAXLEN', '~', MAX_ENTRIES, '*', 'events', JSON.stringify(events))
    .then(
      () => undefined,
      (error: Error) => console.error(`[timeline] not published: ${error.message}`),
    );
}

/**
 * Publishes a request's events. The lanes of the requests that finish within 25 ms go out together, as one
 * stream entry: one command and one round trip for all of them, instead of one per payment (the lab's
 * cost on every payment; see bench/results.md). Off with the lab: nobody could read them.
 */
export function publishTimelineEvents(events: TimelineEvent[]): void {
  if (events.length === 0 || !env().LAB_ENABLED) return;
  gathered.push(...events);
  if (publishing) return;
  publishing = setTimeout(() => {
    publishing = undefined;
    const batch = gathered;
    gathered = [];
    void append(batch);
  }, BATCH_MS);
}

/**
 * Publishes one event at once (the receipt worker's, which may be killed right after on purpose; a click the
 * browser swallowed, whose report is answered once the event is on the timeline). Never rejects.
 */
export function publishTimelineEvent(event: TimelineEvent): Promise<void> {
  return env().LAB_ENABLED ? append([event]) : Promise.resolve();
}

export type Lane = {
  requestId: string;
  /** Records a step that took the time since the previous mark, and why (its detail is the reason in English). */
  mark(step: TimelineEvent['step'], decision: string, why?: TimelineReason): void;
  /** Publishes the marks so far (before a slow step, so the lab shows where a request waits; and at the end). */
  flush(): void;
  /** Shows the lane (its marks from now on) in that caller's lab too: the order's owner. */
  showTo(scope: string): void;
};

/** A request's lane on the timeline; each mark measures the time since the previous one. */
/** A request's id: its lane on the timeline, and its X-Request-Id. */
export function newRequestId(): string {
  // Six random bytes each, drawn from a pool filled 1,024 ids at a time: one call into the CSPRNG (and
  // through Next.js's wrapper of node:crypto) per thousand requests instead of one per request.
  if (idPoolAt + 6 > idPool.length) {
    idPool = randomBytes(6 * 1_024);
    idPoolAt = 0;
  }
  idPoolAt += 6;
  return idPool.toString('hex', idPoolAt - 6, idPoolAt);
}
let idPool = Buffer.alloc(0);
let idPoolAt = 0;

export function startLane(
  laneBase: Pick<TimelineEvent, 'orderNo' | 'channel' | 'instance' | 'viewers'>,
  publish: (events: TimelineEvent[]) => void = publishTimelineEvents,
  requestId: string = newRequestId(),
): Lane {
  let base = laneBase;
  let last = performance.now();
  let buffered: TimelineEvent[] = [];
  // The stream's lanes carry each step's reason; its English `detail` is worded when the timeline is read
  // (readTimeline), so a payment formats no message. A publisher of its own (a test's) gets them worded.
  const toStream = publish === publishTimelineEvents;
  return {
    requestId,
    mark(step, decision, why) {
      const now = performance.now();
      const { orderNo, channel, instance, viewers } = base;
      const event: TimelineEvent = {
        orderNo,
        channel,
        instance,
        viewers,
        requestId,
        step,
        decision,
        durationMs: 0,
        at: 0,
      };
      if (why) event.reason = why;
      event.durationMs = Math.round(now - last);
      // The wall clock from the monotonic one: Next.js instruments Date.now() on the server, at a cost per call.
      event.at = Math.round(performance.timeOrigin + now);
      buffered.push(event);
      last = now;
    },
    flush() {
      const events = buffered;
      buffered = [];
      if (toStream) publish(events);
      else publish(events.map(worded));
    },
    showTo(scope) {
      const viewer = viewerOf(scope);
      if (!base.viewers?.includes(viewer)) base = { ...base, viewers: [...(base.viewers ?? []), viewer] };
    },
  };
}

/** The event with its `detail`: the English wording of its reason, for the lanes that carry a reason only. */
function worded(event: TimelineEvent): TimelineEvent {
  return event.detail === undefined && event.reason
    ? { ...event, detail: englishDetail(event.reason as TimelineReason) }
    : event;
}

/** An event as read back: `streamId` is its entry's id (the `after` cursor), `id` is unique per event. */
export type StoredTimelineEvent = TimelineEvent & { id: string; streamId: string };

/** A caller as the timeline names it: a short hash, so the room's view never shows anyone's session id. */
export function viewerOf(scope: string): string {
  let viewer = viewers.get(scope);
  if (viewer === undefined) {
    viewer = createHash('sha256').update(scope).digest('base64url').slice(0, 12);
    // A caller pays many times (an API client, a session): its hash is kept, for up to 10,000 callers.
    if (viewers.size >= 10_000) viewers.clear();
    viewers.set(scope, viewer);
  }
  return viewer;
}
const viewers = new Map<string, string>();

/**
 * Events of the entries after the stream id `after`, oldest first; without `after`, the latest entries.
 * `viewer`: only the lanes that caller may see (its own requests, and those on its orders, and the Redis server's).
 */
export async function readTimeline(
  after: string | undefined,
  limit = 200,
  viewer?: string,
): Promise<StoredTimelineEvent[]> {
  const redis = getRedis();
  const entries = after
    ? await redis.xrange(TIMELINE_KEY, `(${after}`, '+', 'COUNT', limit)
    : (await redis.xrevrange(TIMELINE_KEY, '+', '-', 'COUNT', limit)).reverse();
  return entries.flatMap(([streamId, fields]) => {
    try {
      const events = JSON.parse(fields[fields.indexOf('events') + 1] ?? '[]') as TimelineEvent[];
      return events.flatMap((event, index) =>
        // A change of Redis server concerns every payment in flight: every lab shows it.
        viewer === undefined || event.viewers?.includes(viewer) || event.channel === 'redis'
          ? [{ ...worded(event), id: `${streamId}/${index}`, streamId }]
          : [],
      );
    } catch {
      return [];
    }
  });
}

export async function clearTimeline(): Promise<void> {
  await getRedis().del(TIMELINE_KEY);
}
