import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getDb, hotPath } from '../db.ts';
import { createOrder } from '../payments/orders.ts';
import { DuplicateRecordError, insertDedupRecord, insertPaymentDedupRow, isUniqueViolation } from './dedup.ts';

describe('the dedup table (real PostgreSQL)', () => {
  it('refuses a second (biz_type, biz_no) with P2002, surfaced as DuplicateRecordError', async () => {
    const bizNo = `ord_${randomBytes(8).toString('hex')}`;
    await insertDedupRecord(getDb(), 'PAYMENT', bizNo, 'first');
    await expect(insertDedupRecord(getDb(), 'PAYMENT', bizNo, 'second')).rejects.toBeInstanceOf(DuplicateRecordError);
    // The raw Prisma 7 error really is P2002 (with a driver adapter there is no meta.target any more).
    const raw = await getDb()
      .idempotentRecord.create({ data: { bizType: 'PAYMENT', bizNo, owner: 'third' } })
      .catch((error: unknown) => error);
    expect(isUniqueViolation(raw)).toBe(true);
    // Another biz type with the same number is another key.
    await insertDedupRecord(getDb(), 'RECEIPT', bizNo, 'first');
  });

  it('gives a payment row the order’s next fencing token, which keeps rising across rows deleted', async () => {
    const { orderNo } = await createOrder({});
    const now = new Date();
    expect(await insertPaymentDedupRow(getDb(), orderNo, 'first', now)).toBe(1);
    await expect(insertPaymentDedupRow(getDb(), orderNo, 'second', now)).rejects.toBeInstanceOf(DuplicateRecordError);
    // The refused insert's raise of the generation was rolled back with it.
    expect((await getDb().order.findUniqueOrThrow({ where: { orderNo } })).fence).toBe(1);
    await getDb().idempotentRecord.deleteMany({ where: { bizType: 'PAYMENT', bizNo: orderNo } });
    expect(await insertPaymentDedupRow(getDb(), orderNo, 'third', now)).toBe(2);
  });

  it('refuses the second row on the hot path too, where the adapter’s own error arrives unwrapped', async () => {
    const { orderNo } = await createOrder({});
    const now = new Date();
    expect(await insertPaymentDedupRow(hotPath(), orderNo, 'first', now)).toBe(1);
    await expect(insertPaymentDedupRow(hotPath(), orderNo, 'second', now)).rejects.toBeInstanceOf(DuplicateRecordError);
    const raw = await hotPath()
      .$queryRaw`INSERT INTO idempotent_record (biz_type, biz_no, owner) VALUES ('PAYMENT', ${orderNo}, 'third')`.catch(
      (error: unknown) => error,
    );
    expect((raw as Error).name).toBe('DriverAdapterError');
    expect(isUniqueViolation(raw)).toBe(true);
    // Any other refusal is not a duplicate.
    const other = await hotPath()
      .$queryRaw`INSERT INTO idempotent_record (biz_type, biz_no, owner) VALUES (${'x'.repeat(300)}, ${orderNo}, 'x')`.catch(
      (error: unknown) => error,
    );
    expect(isUniqueViolation(other)).toBe(false);
  });
});
