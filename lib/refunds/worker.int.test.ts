// The refund worker against the real Redis stream and PostgreSQL: a consumer dies after refunding and before its
// ack; the message is delivered again (at-least-once), with the same request id, and the refund's defences answer
// it with the first outcome. With every defence off, the redelivery refunds again: the lesson the lab shows. An
// answer that says "not now" leaves the message pending: it is delivered again until the refund is made.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALL_OFF, ALL_ON, newOrder, SimulatedCrash, setOrderLab, sleep, testPayOptions } from '../../test/payments.ts';
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

  it('a refund told "payment in progress" is left pending, and delivered again until the refund is made', async () => {
    const caller = clientScope(`worker-${randomUUID().slice(0, 8)}`);
    // The payment charges, then its process dies: its claim stays held (the sweep takes it over after two leases).
    const claims = { leaseMs: 1_000 };
    const orderNo = await newOrder({ layers: ALL_ON, faults: { crashAfterCharge: true }, claims });
    await getDb().order.update({ where: { orderNo }, data: { owner: caller } });
    const paying = pay({ orderNo, caller, channel: 'api', idempotencyKey: `pay-${orderNo}` }, testPayOptions());
    await expect(paying).rejects.toThrow(SimulatedCrash);
    await setOrderLab(orderNo, { layers: ALL_ON, faults: {}, claims });
    await ensureRefundsGroup();
    const id = await enqueueRefund({ requestId: `rq-${orderNo}`, orderNo, amountCents: 500, caller });
    const mine = (deliveries: RefundDelivery[]) =>
      deliveries.filter((d) => d.id === id).map((d) => [d.redelivered, d.result?.kind, d.later]);

    expect(mine(await consumeRefunds('worker-a', { blockMs: 100 }))).toEqual([[false, 'payment_in_progress', true]]);
    // Left pending, not acknowledged: a consumer that takes over what waited delivers it again (as the worker's loop
    // does every round), told "not now" while the payment is being settled, until the refund is made.
    let again = mine(await consumeRefunds('worker-b', { blockMs: 100, reclaimIdleMs: 0 }));
    expect(again).toEqual([[true, 'payment_in_progress', true]]);
    await sleep(2 * claims.leaseMs + 100); // the sweep's patience: two leases
    for (let round = 0; round < 20 && again[0]?.[1] !== 'completed'; round++) {
      again = mine(await consumeRefunds('worker-b', { blockMs: 100, reclaimIdleMs: 0 }));
      if (again[0]?.[1] !== 'completed') await sleep(200);
    }
    expect(again).toEqual([[true, 'completed', false]]);
    expect(await refundsOf(orderNo)).toHaveLength(1);
    // Acknowledged now: never delivered again.
    expect(mine(await consumeRefunds('worker-c', { blockMs: 100, reclaimIdleMs: 0 }))).toEqual([]);
  });

  it('with every defence off, the redelivery refunds again', async () => {
    const { orderNo, again } = await deliveredTwice(ALL_OFF);
    expect(again.map((d) => d.result?.kind)).toEqual(['completed']);
    expect(await refundsOf(orderNo)).toHaveLength(2);
  });
});
