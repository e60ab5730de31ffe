// Retention against the real PostgreSQL: old settled rows go with everything that hangs on them; recent
// ones, and old ones still in doubt, stay.
import { describe, expect, it } from 'vitest';
import { getDb } from '../db.ts';
import { createOrder } from './orders.ts';
import { pruneOldRecords } from './retention.ts';

const DAY = 86_400_000;

async function orderAged(days: number, status: 'PAID' | 'PENDING' | 'UNKNOWN') {
  const { orderNo } = await createOrder({});
  const createdAt = new Date(Date.now() - days * DAY);
  await getDb().order.update({ where: { orderNo }, data: { createdAt, status } });
  await getDb().bankCharge.create({
    data: { id: `ch_ret_${orderNo}`, merchantRef: orderNo, amountCents: 1, createdAt },
  });
  await getDb().receipt.create({
    data: { orderNo, chargeId: `ch_ret_${orderNo}`, amountCents: 1, consumer: 'retention-test', sentAt: createdAt },
  });
  return orderNo;
}

describe('retention', () => {
  it('prunes what is older than the cutoff and settled, with its charges and receipts; keeps the rest', async () => {
    const old = await orderAged(40, 'PAID');
    const abandoned = await orderAged(40, 'PENDING');
    const inDoubt = await orderAged(40, 'UNKNOWN');
    const recent = await orderAged(1, 'PAID');
    await pruneOldRecords(new Date(Date.now() - 30 * DAY));
    const left = await getDb().order.findMany({
      where: { orderNo: { in: [old, abandoned, inDoubt, recent] } },
      select: { orderNo: true },
    });
    expect(left.map((order) => order.orderNo).sort()).toEqual([inDoubt, recent].sort());
    const charges = await getDb().bankCharge.count({ where: { merchantRef: { in: [old, abandoned] } } });
    const receipts = await getDb().receipt.count({ where: { orderNo: { in: [old, abandoned] } } });
    expect([charges, receipts]).toEqual([0, 0]);
    expect(await getDb().bankCharge.count({ where: { merchantRef: { in: [inDoubt, recent] } } })).toBe(2);
  });
});
