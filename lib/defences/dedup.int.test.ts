import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getDb } from '../db.ts';
import {
  DuplicateRecordError,
  deleteSettledDedupRecords,
  insertDedupRecord,
  isUniqueViolation,
  readDedupRecord,
  releaseDedupRecord,
} from './dedup.ts';

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

  it('lets only the owner release a row, and never a row with an outcome', async () => {
    const bizNo = `ord_${randomBytes(8).toString('hex')}`;
    await insertDedupRecord(getDb(), 'PAYMENT', bizNo, 'owner-a');
    await releaseDedupRecord(getDb(), 'PAYMENT', bizNo, 'zombie');
    expect(await readDedupRecord(getDb(), 'PAYMENT', bizNo)).not.toBeNull();
    await releaseDedupRecord(getDb(), 'PAYMENT', bizNo, 'owner-a');
    expect(await readDedupRecord(getDb(), 'PAYMENT', bizNo)).toBeNull();
  });

  it('cleans up settled rows past the retention window, and only those', async () => {
    const old = new Date(Date.now() - 40 * 86_400_000);
    const [settledOld, pendingOld, settledNew] = ['a', 'b', 'c'].map(
      (x) => `ord_${x}${randomBytes(7).toString('hex')}`,
    );
    await getDb().idempotentRecord.createMany({
      data: [
        { bizType: 'PAYMENT', bizNo: settledOld ?? '', owner: 'o', outcome: { status: 'PAID' }, createdAt: old },
        { bizType: 'PAYMENT', bizNo: pendingOld ?? '', owner: 'o', createdAt: old },
        { bizType: 'PAYMENT', bizNo: settledNew ?? '', owner: 'o', outcome: { status: 'PAID' } },
      ],
    });
    await deleteSettledDedupRecords(getDb(), new Date(Date.now() - 30 * 86_400_000));
    expect(await readDedupRecord(getDb(), 'PAYMENT', settledOld ?? '')).toBeNull();
    expect(await readDedupRecord(getDb(), 'PAYMENT', pendingOld ?? '')).not.toBeNull(); // in flight: the reconciler's
    expect(await readDedupRecord(getDb(), 'PAYMENT', settledNew ?? '')).not.toBeNull();
  });
});
