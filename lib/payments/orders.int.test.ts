import { describe, expect, it } from 'vitest';
import { getDb } from '../db.ts';
import { createOrder, DEFAULT_AMOUNT_CENTS, findOrderView } from './orders.ts';

describe('orders (real PostgreSQL)', () => {
  it('creates a pending order with a unique order number and finds it with its card statement', async () => {
    const [a, b] = await Promise.all([createOrder({ amountCents: 1999 }), createOrder({})]);
    expect(a.orderNo).not.toBe(b.orderNo);
    expect(a).toMatchObject({ amountCents: 1999, status: 'PENDING' });
    expect(b.amountCents).toBe(DEFAULT_AMOUNT_CENTS);

    await getDb().bankCharge.create({
      data: { id: `ch_test_${a.orderNo}`, merchantRef: a.orderNo, amountCents: 1999 },
    });
    const view = await findOrderView(a.orderNo);
    expect(view?.charges.map((charge) => charge.id)).toEqual([`ch_test_${a.orderNo}`]);
    expect((await findOrderView(b.orderNo))?.charges).toEqual([]);
  });

  it('keeps an order’s own lab settings', async () => {
    const order = await createOrder({ lab: { layers: { token: false } } });
    const row = await getDb().order.findUniqueOrThrow({ where: { orderNo: order.orderNo } });
    expect(row.lab).toEqual({ layers: { token: false } });
  });

  it('returns null for an unknown order', async () => {
    expect(await findOrderView('ord_0000000000000000')).toBeNull();
  });
});
