import 'server-only';
// What every consumer group of this app does with its stream (the receipts' and the refund worker's): create the
// group once, and read a round of deliveries: first the messages another consumer left pending too long (XAUTOCLAIM:
// that consumer is presumed dead, and the message is delivered again), then new ones (XREADGROUP, blocking a while).
// What a delivery means, and its XACK, are the consumer's own.
import type { getRedis } from '../redis.ts';

type Redis = ReturnType<typeof getRedis>;
type Entry = [id: string, fields: string[]];

/** One delivery of a message: its stream id, its fields, and whether another consumer had it before. */
export type Delivery = { id: string; fields: Record<string, string>; redelivered: boolean };

/** The group on the stream (and the stream), unless it is there already. */
export async function ensureGroup(redis: Redis, stream: string, group: string): Promise<void> {
  try {
    await redis.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('BUSYGROUP'))) throw error;
  }
}

/** A round of at most 20 reclaimed and 20 new deliveries, waiting up to `blockMs` for new ones. */
export async function readDeliveries(
  redis: Redis,
  at: { stream: string; group: string; consumer: string; reclaimIdleMs: number; blockMs: number },
): Promise<Delivery[]> {
  const { stream, group, consumer } = at;
  const [, reclaimed] = (await redis.xautoclaim(stream, group, consumer, at.reclaimIdleMs, '0-0', 'COUNT', 20)) as [
    string,
    Entry[],
  ];
  const fresh = (await redis.xreadgroup(
    'GROUP',
    group,
    consumer,
    'COUNT',
    20,
    'BLOCK',
    at.blockMs,
    'STREAMS',
    stream,
    '>',
  )) as Array<[string, Entry[]]> | null;
  // A message deleted while it was pending may come back as null (Redis 6.2's XAUTOCLAIM).
  const delivery =
    (redelivered: boolean) =>
    ([id, list]: Entry) => ({ id, fields: fieldsOf(list), redelivered });
  return [...reclaimed.filter(Boolean).map(delivery(true)), ...(fresh?.[0]?.[1] ?? []).map(delivery(false))];
}

function fieldsOf(list: string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i] as string] = list[i + 1] as string;
  return fields;
}
