import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getDb } from '../db.ts';
import {
  DuplicateRecordError,
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
});
