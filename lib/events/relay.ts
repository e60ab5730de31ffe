import 'server-only';
// The outbox relay: publishes unpublished outbox rows to the Redis stream, then marks them published.
// At least once: a crash between the XADD and the commit publishes the row again next time, which is why
// every consumer must be idempotent. SKIP LOCKED lets several relays (one per instance) share the work.
import { getDb } from '../db.ts';
import { getRedis } from '../redis.ts';

export const EVENTS_STREAM = 'payments:events';
const MAX_STREAM_LENGTH = 10_000;

type OutboxRow = { id: number; topic: string; key: string; payload: unknown };

export async function relayOutbox(batch = 100): Promise<number> {
  return getDb().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<OutboxRow[]>`
      SELECT id, topic, key, payload FROM outbox
      WHERE published_at IS NULL ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED`;
    if (rows.length === 0) return 0;
    const pipeline = getRedis().pipeline();
    for (const row of rows) {
      pipeline.xadd(
        EVENTS_STREAM,
        'MAXLEN',
        '~',
        MAX_STREAM_LENGTH,
        '*',
        'outboxId',
        String(row.id),
        'topic',
        row.topic,
        'key',
        row.key,
        'payload',
        JSON.stringify(row.payload),
      );
    }
    const results = (await pipeline.exec()) ?? [];
    const now = new Date();
    for (const [index, row] of rows.entries()) {
      const [error, streamId] = results[index] ?? [new Error('no reply'), null];
      if (error) throw error;
      await tx.outboxEvent.update({ where: { id: row.id }, data: { publishedAt: now, streamId: String(streamId) } });
    }
    return rows.length;
  });
}
