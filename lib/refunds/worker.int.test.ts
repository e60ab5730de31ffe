// The refund worker against the real Redis stream and PostgreSQL: a consumer dies after refunding and before its
// ack; the message is delivered again (at-least-once), with the same request id, and the refund's defences answer
// it with the first outcome. With every defence off, the redelivery refunds again: the lesson the lab shows.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALL_OFF, ALL_ON, newOrder, testPayOptions } from '../../test/payments.ts';
import { getDb } from '../db.ts';
import type { Layers } from '../lab/settings.ts';
import { pay } from '../payments/pay.ts';
import { type CallerScope, clientScope } from '../session.ts';
import { consumeRefunds, enqueueRefund, ensureRefundsGroup, type RefundDelivery } from './worker.ts';

class ConsumerDied extends Error {}

async function paidOrder(layers: Layers): Promise<{ orderNo: string; caller: CallerScope }> {
  const caller = clientScope(`worker-${randomUUID().slice(0, 8)}`);
  const orderNo = await newOrder({ layers });
  await getDb().order.update({ where: { orderNo }, data: { owner: caller } });
  await pay({ orderNo, caller, channel: 'api', idempotencyKey: `pay-${orderNo}` }, testPayOptions());
  return { orderNo, caller };
}

const refundsOf = (orderNo: string) =>
  getDb().$queryRaw<Array<{ id: string }>>`
    SELECT r.id FROM bank_refunds r JOIN bank_charges c ON c.id = r.charge_id WHERE c.merchant_ref = ${orderNo}`;

/** The message refunded, its consumer dead before the ack; then another consumer takes the message over. */
async function deliveredTwice(layers: Layers) {
  const { orderNo, caller } = await paidOrder(layers);
  await ensureRefundsGroup();
  await enqueueRefund({ requestId: `rq-${orderNo}`, orderNo, amountCents: 500, caller });
  const first = await consumeRefunds('worker-a', {
    blockMs: 100,
    beforeAck: async () => {
      throw new ConsumerDied();
    },
  }).catch((error: unknown) => (error instanceof ConsumerDied ? 'died' : Promise.reject(error)));
  const again: RefundDelivery[] = await consumeRefunds('worker-b', { blockMs: 100, reclaimIdleMs: 0 });
  return { orderNo, first, again };
}

describe('the refund worker', () => {
  it('a message delivered again after its consumer died before the ack: one refund, the first outcome', async () => {
    const { orderNo, first, again } = await deliveredTwice(ALL_ON);
    expect(first).toBe('died');
    expect(again.map((d) => [d.redelivered, d.result?.kind])).toEqual([[true, 'duplicate']]);
    expect(await refundsOf(orderNo)).toHaveLength(1);
  });

  it('with every defence off, the redelivery refunds again', async () => {
    const { orderNo, again } = await deliveredTwice(ALL_OFF);
    expect(again.map((d) => d.result?.kind)).toEqual(['completed']);
    expect(await refundsOf(orderNo)).toHaveLength(2);
  });
});
