// The straight line is a fair yardstick for the pipeline's shape only if it makes the guarded payment's own work
// (decision 039): the same rows in PostgreSQL and the same record in Redis, with the same checks. Compared here with
// an API payment through the pipeline with the lab off, on real PostgreSQL and Redis. What this compares is what each
// leaves behind, not the round trips each took to get there.
import { describe, expect, it } from 'vitest';
import { chargeCount, orderRow, testPayOptions, withTheLabOff } from '../../test/payments.ts';
import { getDb } from '../db.ts';
import { requestKeyName } from '../defences/request-key/record.ts';
import { createOrder } from '../payments/orders.ts';
import { pay } from '../payments/pay.ts';
import { getRedis } from '../redis.ts';
import { type CallerScope, clientScope } from '../session.ts';
import { straightLinePayment } from './straight-line.ts';

// The lab off, as the benchmark's lab-off instance runs.
withTheLabOff();

const caller = () => clientScope(`bench-${Math.random().toString(36).slice(2)}`);

/** What a payment left behind, without what differs by nature (ids, times, the order's number). */
async function leftBehind(orderNo: string, payer: CallerScope, key: string) {
  const order = await orderRow(orderNo);
  const [row] = await getDb().$queryRaw<Array<{ fence: number; firstFence: number; outcome: { status: string } }>>`
    SELECT fence, first_fence AS "firstFence", outcome FROM idempotent_record
    WHERE biz_type = 'PAYMENT' AND biz_no = ${orderNo}`;
  const events = await getDb().$queryRaw<Array<{ topic: string; charged: boolean }>>`
    SELECT topic, charge_id IS NOT NULL AS charged FROM outbox WHERE key = ${orderNo}`;
  const stored = JSON.parse((await getRedis().get(requestKeyName(payer, key))) ?? 'null');
  return {
    charges: await chargeCount(orderNo),
    order: { status: order.status, fence: order.fence, claimed: order.attemptId ?? order.claimedAt ?? null },
    row: row && { fence: row.fence, firstFence: row.firstFence, status: row.outcome?.status },
    events,
    key: stored && { state: stored.state, fields: Object.keys(stored).sort(), status: stored.outcome?.status },
  };
}

describe('the straight line (the benchmark’s yardstick)', () => {
  it('leaves what an API payment through the pipeline leaves: one charge, the same rows, the same record', async () => {
    const payer = caller();
    const viaPipeline = (await createOrder({}, payer)).orderNo;
    const straight = (await createOrder({}, payer)).orderNo;
    const paid = await pay(
      { orderNo: viaPipeline, caller: payer, channel: 'api', idempotencyKey: 'k-pipeline', amountCents: 4_200 },
      testPayOptions(),
    );
    expect(paid.kind).toBe('completed');
    const answer = await straightLinePayment({
      orderNo: straight,
      amountCents: 4_200,
      caller: payer,
      key: 'k-straight',
    });
    expect(answer).toMatchObject({ kind: 'completed', outcome: { status: 'PAID', orderNo: straight } });

    const expected = await leftBehind(viaPipeline, payer, 'k-pipeline');
    expect(expected).toMatchObject({
      charges: 1,
      order: { status: 'PAID', fence: 1, claimed: null },
      row: { fence: 1, firstFence: 1, status: 'PAID' },
      events: [{ topic: 'payment.paid', charged: true }],
      key: { state: 'done', status: 'PAID' },
    });
    expect(await leftBehind(straight, payer, 'k-straight')).toEqual(expected);
  });

  it('checks the payer and the amount in the order’s claim: nothing charged, the order untouched, the key given back', async () => {
    const owner = caller();
    const { orderNo } = await createOrder({}, owner);
    const other = caller();
    expect(await straightLinePayment({ orderNo, amountCents: 4_200, caller: other, key: 'k' })).toMatchObject({
      kind: 'in_progress',
      answeredBy: 'stateMachine',
    });
    expect(await straightLinePayment({ orderNo, amountCents: 1, caller: owner, key: 'k' })).toMatchObject({
      kind: 'in_progress',
      answeredBy: 'stateMachine',
    });
    expect(await chargeCount(orderNo)).toBe(0);
    expect((await orderRow(orderNo)).status).toBe('PENDING');
    expect(await getRedis().exists(requestKeyName(other, 'k'), requestKeyName(owner, 'k'))).toBe(0);
  });

  it('answers a key it holds "in progress" and charges once', async () => {
    const payer = caller();
    const { orderNo } = await createOrder({}, payer);
    const twice = await Promise.all([
      straightLinePayment({ orderNo, amountCents: 4_200, caller: payer, key: 'k' }),
      straightLinePayment({ orderNo, amountCents: 4_200, caller: payer, key: 'k' }),
    ]);
    expect(twice.map((answer) => answer.kind).sort()).toEqual(['completed', 'in_progress']);
    expect(await chargeCount(orderNo)).toBe(1);
  });
});
