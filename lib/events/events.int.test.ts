// The events against the real PostgreSQL and Redis (one server, and a Redis Cluster in npm test's cluster run):
// the outbox relay publishes a paid order's event to the stream (XADD, pipelined: one key, one slot), the
// send-receipt consumer group delivers it (XGROUP, XREADGROUP, XACK), and a consumer that dies before its ack
// leaves the message to another one (XAUTOCLAIM), whose second delivery sends no second receipt.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALL_ON, newOrder, testPayOptions } from '../../test/payments.ts';
import { getDb } from '../db.ts';
import { pay } from '../payments/pay.ts';
import { clientScope } from '../session.ts';
import { consumeReceipts, ensureReceiptsGroup, RECLAIM_IDLE_MS } from './receipts.ts';
import { relayOutbox } from './relay.ts';

class ConsumerDied extends Error {}

/** A paid order, with its outbox row written in the payment's transaction. */
async function paidOrder(): Promise<string> {
  const orderNo = await newOrder({ layers: ALL_ON });
  const caller = clientScope('events-test');
  const result = await pay({ orderNo, caller, channel: 'api', idempotencyKey: `ev-${orderNo}` }, testPayOptions());
  expect(result.kind).toBe('completed');
  return orderNo;
}

/** Relays until this order's event is on the stream (other files' rows may go first), and returns its id. */
async function relayed(orderNo: string): Promise<string> {
  for (let round = 0; round < 100; round++) {
    const row = await getDb().outboxEvent.findFirstOrThrow({ where: { key: orderNo }, select: { streamId: true } });
    if (row.streamId) return row.streamId;
    await relayOutbox();
  }
  throw new Error(`the outbox row of ${orderNo} was never published`);
}

const receiptsOf = (orderNo: string) => getDb().receipt.findMany({ where: { orderNo }, select: { consumer: true } });

describe('events: outbox → Redis stream → the send-receipt consumer group', () => {
  it('publishes a paid order’s event once, and the group delivers it: one receipt', async () => {
    const orderNo = await paidOrder();
    const streamId = await relayed(orderNo);
    expect(streamId).toMatch(/^\d+-\d+$/);
    await ensureReceiptsGroup();
    await ensureReceiptsGroup(); // BUSYGROUP is "already there", not an error
    const consumer = `rcpt-${randomBytes(3).toString('hex')}`;
    for (let round = 0; round < 50 && (await receiptsOf(orderNo)).length === 0; round++) {
      await consumeReceipts(consumer, { blockMs: 100 });
    }
    expect(await receiptsOf(orderNo)).toEqual([{ consumer }]);
  });

  it('a consumer that dies before its ack: another reclaims the message, and sends no second receipt', async () => {
    const orderNo = await paidOrder();
    await relayed(orderNo);
    await ensureReceiptsGroup();
    const dying = `rcpt-dying-${randomBytes(3).toString('hex')}`;
    const heir = `rcpt-heir-${randomBytes(3).toString('hex')}`;
    let died = false;
    for (let round = 0; round < 50 && !died; round++) {
      await consumeReceipts(dying, {
        blockMs: 100,
        beforeAck: async (eventOrder) => {
          if (eventOrder === orderNo) throw new ConsumerDied();
        },
      }).catch((error: unknown) => {
        if (!(error instanceof ConsumerDied)) throw error;
        died = true;
      });
    }
    expect(died).toBe(true);
    expect(await receiptsOf(orderNo)).toEqual([{ consumer: dying }]); // sent, never acknowledged
    // Pending and idle past RECLAIM_IDLE_MS: the next round of any consumer claims it (XAUTOCLAIM).
    await new Promise((resolve) => setTimeout(resolve, RECLAIM_IDLE_MS + 200));
    await consumeReceipts(heir, { blockMs: 100 });
    expect(await receiptsOf(orderNo)).toEqual([{ consumer: dying }]); // redelivered: RECEIPT's unique key held
  });
});
