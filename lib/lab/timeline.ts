import 'server-only';
// The lab's timeline: every step of every payment request, published to a Redis stream that every app
// instance writes to and every open lab tab reads from. Publishing never slows down or fails a payment.
import type { Cluster, Redis } from 'ioredis';
import { env } from '../env.ts';
import { getRedis } from '../redis.ts';
import { hashCaller } from '../telemetry/spans.ts';
import { englishDetail, type TimelineReason } from './reasons.ts';
import { eventsOfPiece, type LanePiece, type TimelineEvent } from './timeline-event.ts';

/** Every lane of every caller: the presenter's room reads it (`?scope=room`, /lab/room). */
export const TIMELINE_KEY = 'lab:timeline';
const MAX_ENTRIES = 1_000;

/**
 * A caller's own lanes, a stream per viewer: what that attendee's lab reads. Reading them out of the shared
 * stream let anyone starve a lab: 200 entries of others' lanes, and the victim's lab showed none. The keys
 * share the shared stream's hash slot (`{lab:timeline}`), so one pipeline writes them all, on a Redis Cluster
 * too.
 */
const viewerKey = (viewer: string) => `{${TIMELINE_KEY}}:viewer:${viewer}`;
const MAX_OWN_ENTRIES = 200;
/** An attendee's lanes outlive a workshop's day, not more. */
const OWN_TTL_MS = 6 * 60 * 60 * 1000;
/** What concerns every payment in flight (a change of Redis server): every lab shows it. */
const EVERYONE_KEY = `{${TIMELINE_KEY}}:everyone`;
const MAX_EVERYONE_ENTRIES = 100;

type Items = { events: TimelineEvent[] } | { lanes: LanePiece[] };
type Writer = Pick<Redis, 'pipeline'> | Pick<Cluster, 'pipeline'>;

/** What one batch appends to which stream: all of it to the room's, each viewer's own part to theirs. */
function streamsOf(items: Items): Array<{ key: string; maxLen: number; ttlMs?: number; field: string; value: string }> {
  // Each lane piece or event is made JSON once, however many streams it goes to (the room's and each of its
  // viewers'): the lab's cost on every payment (bench/results.md).
  const [field, list] = 'lanes' in items ? ['lanes', items.lanes] : ['events', items.events];
  const json = list.map((item) => JSON.stringify(item));
  const array = (indexes: number[]) => `[${indexes.map((i) => json[i]).join(',')}]`;
  const streams: Array<{ key: string; maxLen: number; ttlMs?: number; field: string; value: string }> = [
    { key: TIMELINE_KEY, maxLen: MAX_ENTRIES, field, value: `[${json.join(',')}]` },
  ];
  const parts = new Map<string, number[]>();
  const everyone: number[] = [];
  list.forEach((item, index) => {
    const { viewers } = 'lane' in item ? item.lane : item;
    if (!('lane' in item) && item.channel === 'redis') everyone.push(index);
    for (const viewer of viewers ?? []) {
      const part = parts.get(viewer);
      // Once per viewer, however often the item names them: a part as long as the batch is the whole batch.
      if (!part) parts.set(viewer, [index]);
      else if (part.at(-1) !== index) part.push(index);
    }
  });
  for (const [viewer, part] of parts) {
    const value = part.length === list.length ? (streams[0]?.value as string) : array(part);
    streams.push({ key: viewerKey(viewer), maxLen: MAX_OWN_ENTRIES, ttlMs: OWN_TTL_MS, field, value });
  }
  if (everyone.length > 0)
    streams.push({ key: EVERYONE_KEY, maxLen: MAX_EVERYONE_ENTRIES, field: 'events', value: array(everyone) });
  return streams;
}

/**
 * Appends one batch (single events, or pieces of lanes) to the room's stream and to each viewer's own, in one
 * round trip. Exported for the gateway's lanes, which the cluster's launcher writes with a client of its own.
 */
export async function appendToTimeline(redis: Writer, items: Items): Promise<void> {
  const pipeline = redis.pipeline();
  for (const { key, maxLen, ttlMs, field, value } of streamsOf(items)) {
    pipeline.xadd(key, 'MAXLEN', '~', maxLen, '*', field, value);
    if (ttlMs) pipeline.pexpire(key, ttlMs);
  }
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error);
  if (failed?.[0]) throw failed[0];
}

/** How long a process gathers lanes before it publishes them together (a lab tab polls every 700 ms). */
const BATCH_MS = 25;
let gathered: LanePiece[] = [];
let publishing: NodeJS.Timeout | undefined;

function append(items: Items): Promise<void> {
  return appendToTimeline(getRedis(), items).catch((error: Error) =>
    console.error(`[timeline] not published: ${error.message}`),
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
    void append({ lanes: batch });
  }, BATCH_MS);
}

/** Publishes what is gathered now, without waiting for the batch (before the lab's crash fault kills this process). */
export async function flushTimeline(): Promise<void> {
  clearTimeout(publishing);
  publishing = undefined;
  const batch = gathered;
  gathered = [];
  if (batch.length > 0) await append({ lanes: batch });
}

/**
 * Publishes one event at once (the receipt worker's, which may be killed right after on purpose; a click the
 * browser swallowed, whose report is answered once the event is on the timeline). Never rejects.
 */
export function publishTimelineEvent(event: TimelineEvent): Promise<void> {
  return env().LAB_ENABLED ? append({ events: [event] }) : Promise.resolve();
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
 * Without `viewer`, everyone's (the room); with it, that caller's own lanes (its requests, and those on its
 * orders) and what concerns everyone (a change of Redis server), each read from a stream of its own.
 */
export async function readTimeline(
  after: string | undefined,
  limit = 200,
  viewer?: string,
): Promise<StoredTimelineEvent[]> {
  if (viewer === undefined) return eventsOf(await entriesOf(TIMELINE_KEY, after, limit), '');
  const [own, everyone] = await Promise.all([
    entriesOf(viewerKey(viewer), after, limit),
    // From `after` itself: an entry of this stream may share the cursor's id, written in the same
    // millisecond just after the last read. The lab keeps an event once (its id says which stream it is from).
    entriesOf(EVERYONE_KEY, after, limit, true),
  ]);
  // When the caller's own stream had more than one read holds, the rest of it comes next time: nothing
  // later than what was read of it, or the cursor would skip the rest.
  const last = own.length === limit ? own.at(-1)?.[0] : undefined;
  const shared = last ? everyone.filter(([id]) => compareStreamIds(id, last) <= 0) : everyone;
  return [...eventsOf(own, ''), ...eventsOf(shared, 'e')].sort((a, b) => compareStreamIds(a.streamId, b.streamId));
}

async function entriesOf(key: string, after: string | undefined, limit: number, inclusive = false) {
  const redis = getRedis();
  if (after) return redis.xrange(key, inclusive ? after : `(${after}`, '+', 'COUNT', limit);
  return (await redis.xrevrange(key, '+', '-', 'COUNT', limit)).reverse();
}

function eventsOf(entries: Array<[string, string[]]>, stream: '' | 'e'): StoredTimelineEvent[] {
  return entries.flatMap(([streamId, fields]) => {
    try {
      return eventsOfEntry(fields).map((event, index) => ({
        ...worded(event),
        id: `${streamId}/${stream}${index}`,
        streamId,
      }));
    } catch {
      return [];
    }
  });
}

/** Stream ids in order: "ms-seq", compared as numbers. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs = 0n, aSeq = 0n] = a.split('-').map(BigInt);
  const [bMs = 0n, bSeq = 0n] = b.split('-').map(BigInt);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  if (aSeq === bSeq) return 0;
  return aSeq < bSeq ? -1 : 1;
}

/** An entry's events, whichever way it holds them (single events, or pieces of lanes). */
function eventsOfEntry(fields: string[]): TimelineEvent[] {
  const at = fields.indexOf('lanes');
  if (at >= 0) return (JSON.parse(fields[at + 1] ?? '[]') as LanePiece[]).flatMap(eventsOfPiece);
  return JSON.parse(fields[fields.indexOf('events') + 1] ?? '[]') as TimelineEvent[];
}

/** The presenter empties the room's timeline (and what concerns everyone); each attendee clears their own view. */
export async function clearTimeline(): Promise<void> {
  await getRedis().del(TIMELINE_KEY, EVERYONE_KEY);
}
