import { describe, expect, it } from 'vitest';
import { chargeCount, testPayOptions } from '../../test/payments.ts';
import { getDb } from '../db.ts';
import { getRedis } from '../redis.ts';
import { clientScope, sessionScope } from '../session.ts';
import { orderFactsKey, recallOrderFacts } from './order-facts.ts';
import { createOrder } from './orders.ts';
import { pay } from './pay.ts';

const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 50 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('an order’s facts in Redis (real PostgreSQL and Redis)', () => {
  it('are kept for an order with no settings of its own, and only for it', async () => {
    const owner = clientScope('facts-owner');
    const plain = await createOrder({ amountCents: 1_234 }, owner);
    const own = await createOrder({ lab: { layers: { token: false } } }, owner);
    await until(async () => (await recallOrderFacts(plain.orderNo)) !== undefined);
    expect(await recallOrderFacts(plain.orderNo)).toEqual({ amountCents: 1_234, owner });
    expect(await recallOrderFacts(own.orderNo)).toBeUndefined();
  });

  it('answer a payment in place of the row while they are kept; without them, or for another caller, the row does', async () => {
    // A browser's session paying through the API: its policy is told by the order's owner, read first (a service
    // paying an order made without settings of its own reads nothing first: lib/lab/policy.int.test.ts).
    const owner = sessionScope('facts-payer');
    const pays = (orderNo: string, caller = owner) =>
      pay({ orderNo, caller, channel: 'api', idempotencyKey: `k-${orderNo}`, amountCents: 4_200 }, testPayOptions());
    const order = await createOrder({}, owner);
    await until(async () => (await recallOrderFacts(order.orderNo)) !== undefined);
    // Facts that disagree with the row (written by hand here) show which one a payment read.
    await getRedis().set(orderFactsKey(order.orderNo), JSON.stringify({ amountCents: 1, owner }));
    expect(await pays(order.orderNo)).toMatchObject({ kind: 'amount_mismatch', orderAmountCents: 1 });
    await getRedis().del(orderFactsKey(order.orderNo)); // Redis forgot them (a failover): the row answers
    expect((await pays(order.orderNo)).kind).toBe('completed');
    expect(await chargeCount(order.orderNo)).toBe(1);

    // Another caller: the facts say whose it is, and the row is asked (it may have let that caller in).
    const theirs = await createOrder({}, owner);
    await until(async () => (await recallOrderFacts(theirs.orderNo)) !== undefined);
    expect((await pays(theirs.orderNo, sessionScope('someone-else'))).kind).toBe('order_not_found');
    expect(await chargeCount(theirs.orderNo)).toBe(0);
    expect((await getDb().order.findUniqueOrThrow({ where: { orderNo: theirs.orderNo } })).status).toBe('PENDING');
  });
});
