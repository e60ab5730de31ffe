// The events against the real PostgreSQL and Redis (one server, and a Redis Cluster in npm test's cluster run):
// the outbox relay publishes a paid order's event to the stream (XADD, pipelined: one key, one slot), the
// send-receipt consumer group delivers it (XGROUP, XREADGROUP, XACK), and a consumer that dies before its ack
// leaves the message to another one (XAUTOCLAIM), whose second delivery sends no second receipt.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALL_ON, newOrder, testPayOptions } from '../../test/payments.ts';
import { getDb } from '../db.ts';
import { pay } from '../payments/pay.ts';
import { getRedis } from '../redis.ts';
import { clientScope } from '../session.ts';
import { consumeReceipts, ensureReceiptsGroup, RECEIPTS_GROUP, RECLAIM_IDLE_MS } from './receipts.ts';
import { EVENTS_STREAM, relayOutbox } from './relay.ts';

class ConsumerDied extends Error {}

/** A paid order, with its outbox row written in the payment's transaction. */
async function paidOrder(): Promise<string> {
  const orderNo = await newOrder({ layers: ALL_ON });
  const caller = clientScope('events-test');
  const result = await pay({ orderNo, caller, channel: 'api', idempotencyKey: `ev-${orderNo}` }, testPayOptions());
  expect(result.kind).toBe('completed');
  return orderNo;
}

/** Keeps doing `step` until `done` says so, for at most a minute (the other files' events may come first). */
async function until(what: string, done: () => Promise<boolean>, step: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await step();
  }
}

/**
 * Relays until this order's event is on the stream, and returns its id. The other test files' rows go first
 * (the relay takes the oldest); small batches keep each transaction short on a busy machine.
 */
async function relayed(orderNo: string): Promise<string> {
  const streamIdOf = async () =>
    (await getDb().outboxEvent.findFirstOrThrow({ where: { key: orderNo }, select: { streamId: true } })).streamId;
  await until(
    `the outbox row of ${orderNo} to be published`,
    async () => (await streamIdOf()) !== null,
    () => relayOutbox(20),
  );
  return (await streamIdOf()) as string;
}

/** The consumers a stream entry is pending with in the group: delivered, not yet acknowledged (XPENDING). */
async function pendingWith(streamId: string): Promise<string[]> {
  const pending = (await getRedis().xpending(EVENTS_STREAM, RECEIPTS_GROUP, streamId, streamId, 1)) as Array<
    [id: string, consumer: string, idleMs: number, deliveries: number]
  >;
  return pending.map(([, consumer]) => consumer);
}

const receiptsOf = (orderNo: string) => getDb().receipt.findMany({ where: { orderNo }, select: { consumer: true } });

describe('events: outbox → Redis stream → the send-receipt consumer group', () => {
  it('publishes a paid order’s event once, and the group delivers it: one receipt', { timeout: 150_000 }, async () => {
    const orderNo = await paidOrder();
    const streamId = await relayed(orderNo);
    expect(streamId).toMatch(/^\d+-\d+$/);
    await ensureReceiptsGroup();
    await ensureReceiptsGroup(); // BUSYGROUP is "already there", not an error
    const consumer = `rcpt-${randomBytes(3).toString('hex')}`;
    await until(
      `the receipt of ${orderNo}`,
      async () => (await receiptsOf(orderNo)).length > 0,
      () => consumeReceipts(consumer, { blockMs: 100 }),
    );
    expect(await receiptsOf(orderNo)).toEqual([{ consumer }]);
  });

  it('a consumer that dies before its ack: another reclaims the message, and sends no second receipt', {
    timeout: 150_000,
  }, async () => {
    const orderNo = await paidOrder();
    const streamId = await relayed(orderNo);
    await ensureReceiptsGroup();
    const dying = `rcpt-dying-${randomBytes(3).toString('hex')}`;
    const heir = `rcpt-heir-${randomBytes(3).toString('hex')}`;
    let died = false;
    await until(
      `the consumer to die at ${orderNo}'s event`,
      async () => died,
      () =>
        consumeReceipts(dying, {
          blockMs: 100,
          beforeAck: async (eventOrder) => {
            if (eventOrder === orderNo) throw new ConsumerDied();
          },
        }).catch((error: unknown) => {
          if (!(error instanceof ConsumerDied)) throw error;
          died = true;
        }),
    );
    expect(await receiptsOf(orderNo)).toEqual([{ consumer: dying }]); // sent, never acknowledged
    expect(await pendingWith(streamId)).toEqual([dying]);
    // Pending and idle past RECLAIM_IDLE_MS: the next round of any consumer claims it (XAUTOCLAIM) and acks it.
    await new Promise((resolve) => setTimeout(resolve, RECLAIM_IDLE_MS + 200));
    expect(await consumeReceipts(heir, { blockMs: 100 })).toBeGreaterThan(0);
    expect(await pendingWith(streamId)).toEqual([]);
    expect(await receiptsOf(orderNo)).toEqual([{ consumer: dying }]); // redelivered: RECEIPT's unique key held
  });
});
