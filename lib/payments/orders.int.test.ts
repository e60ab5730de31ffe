import { describe, expect, it } from 'vitest';
import { getDb } from '../db.ts';
import { fingerprintOf, requestKeyName } from '../defences/request-key/record.ts';
import { clientScope } from '../session.ts';
import { createOrder, createOrderOnce, DEFAULT_AMOUNT_CENTS, findOrderView } from './orders.ts';

describe('orders (real PostgreSQL)', () => {
  it('creates a pending order with a unique order number and finds it with its card statement', async () => {
    const [a, b] = await Promise.all([createOrder({ amountCents: 1999 }), createOrder({})]);
    expect(a.orderNo).not.toBe(b.orderNo);
    expect(a).toMatchObject({ amountCents: 1999, status: 'PENDING' });
    expect(b.amountCents).toBe(DEFAULT_AMOUNT_CENTS);

    await getDb().bankCharge.create({
      data: { id: `ch_test_${a.orderNo}`, merchantRef: a.orderNo, amountCents: 1999 },
    });
    const view = await findOrderView(a.orderNo, undefined);
    expect(view?.charges.map((charge) => charge.id)).toEqual([`ch_test_${a.orderNo}`]);
    expect((await findOrderView(b.orderNo, undefined))?.charges).toEqual([]);
  });

  it('keeps an order’s own lab settings', async () => {
    const order = await createOrder({ lab: { layers: { token: false } } });
    const row = await getDb().order.findUniqueOrThrow({ where: { orderNo: order.orderNo } });
    expect(row.lab).toEqual({ layers: { token: false } });
  });

  it('returns null for an unknown order', async () => {
    expect(await findOrderView('ord_0000000000000000', undefined)).toBeNull();
  });

  it('with an Idempotency-Key: 10 concurrent creations make one order; the others wait, then get it', async () => {
    const input = { amountCents: 50_000 + Math.floor(Math.random() * 1_000_000) };
    const key = {
      name: requestKeyName(clientScope('orders-test'), `k-${Date.now()}`),
      fingerprint: fingerprintOf(input),
    };
    const results = await Promise.all(Array.from({ length: 10 }, () => createOrderOnce(input, key)));
    const created = results.filter((result) => result.kind === 'created');
    expect(created).toHaveLength(1);
    expect(results.filter((result) => result.kind !== 'created').map((result) => result.kind)).toEqual(
      Array(9).fill('in_progress'),
    );
    const again = await createOrderOnce(input, key);
    expect(again).toEqual({ kind: 'replayed', order: created[0]?.kind === 'created' ? created[0].order : undefined });
    expect(
      await createOrderOnce({ amountCents: 1 }, { ...key, fingerprint: fingerprintOf({ amountCents: 1 }) }),
    ).toEqual({
      kind: 'mismatch',
    });
    expect(await getDb().order.count({ where: { amountCents: input.amountCents } })).toBe(1);
  });
});
