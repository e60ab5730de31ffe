import 'server-only';
// The lab's timeline: every step of every payment request, published to a Redis stream that every app
// instance writes to and every open lab tab reads from. Publishing never slows down or fails a payment.
import { env } from '../env.ts';
import { getRedis } from '../redis.ts';
import { hashCaller } from '../telemetry/spans.ts';
import { englishDetail, type TimelineReason } from './reasons.ts';
import { eventsOfPiece, type LanePiece, type TimelineEvent } from './timeline-event.ts';

export const TIMELINE_KEY = 'lab:timeline';
const MAX_ENTRIES = 1_000;

/** How long a process gathers lanes before it publishes them together (a lab tab polls every 700 ms). */
const BATCH_MS = 25;
let gathered: LanePiece[] = [];
let publishing: NodeJS.Timeout | undefined;

/** One stream entry: single events (`events`, TimelineEvent[]) or pieces of lanes (`lanes`, LanePiece[]). */
function append(field: 'events' | 'lanes', items: TimelineEvent[] | LanePiece[]): Promise<void> {
  return getRedis()
    .xadd(TIMELINE_KEY, 'MAXLEN', '~', MAX_ENTRIES, '*', field, JSON.stringify(items))
    .then(
      () => undefined,
      (error: Error) => console.error(`[timeline] not published: ${error.message}`),
    );
}

/**
 * Publishes requests' steps, lane by lane. The lanes of the requests that finish within 25 ms go out
 * together, as one stream entry: one command and one round trip for all of them, instead of one per payment
 * (the lab's cost on every payment; see bench/results.md). Off with the lab: nobody could read them.
 */
export function publishTimelineLanes(pieces: LanePiece[]): void {
  if (pieces.length === 0 || !env().LAB_ENABLED) return;
  gathered.push(...pieces);
  if (publishing) return;
  publishing = setTimeout(() => {
    publishing = undefined;
    const batch = gathered;
    gathered = [];
    void append('lanes', batch);
  }, BATCH_MS);
}

/** Publishes what is gathered now, without waiting for the batch (before the lab's crash fault kills this process). */
export async function flushTimeline(): Promise<void> {
  clearTimeout(publishing);
  publishing = undefined;
  const batch = gathered;
  gathered = [];
  if (batch.length > 0) await append('lanes', batch);
}

/**
 * Publishes one event at once (the receipt worker's, which may be killed right after on purpose; a click the
 * browser swallowed, whose report is answered once the event is on the timeline). Never rejects.
 */
export function publishTimelineEvent(event: TimelineEvent): Promise<void> {
  return env().LAB_ENABLED ? append('events', [event]) : Promise.resolve();
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
export const viewerOf = hashCaller;

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
      const events = eventsOfEntry(fields);
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

/** An entry's events, whichever way it holds them (single events, or pieces of lanes). */
function eventsOfEntry(fields: string[]): TimelineEvent[] {
  const at = fields.indexOf('lanes');
  if (at >= 0) return (JSON.parse(fields[at + 1] ?? '[]') as LanePiece[]).flatMap(eventsOfPiece);
  return JSON.parse(fields[fields.indexOf('events') + 1] ?? '[]') as TimelineEvent[];
}

export async function clearTimeline(): Promise<void> {
  await getRedis().del(TIMELINE_KEY);
}
