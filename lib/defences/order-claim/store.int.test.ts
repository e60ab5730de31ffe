import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { getDb, hotPath } from '../../db.ts';
import { createOrder } from '../../payments/orders.ts';
import { DuplicateRecordError, insertDedupRecord, isUniqueViolation } from '../unique-key.ts';
import { claimOrder } from './store.ts';

/** Layer 4 alone: the payment's dedup row is the claim. */
const ROW_ONLY = { stateMachine: false, uniqueConstraint: true };

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
    expect(await claimOrder(ROW_ONLY, orderNo, 'first', now)).toEqual({ fence: 1 });
    // The unique key's refusal is a value: layer 4 refused it.
    expect(await claimOrder(ROW_ONLY, orderNo, 'second', now)).toEqual({ refusedBy: 'uniqueConstraint' });
    // The refused insert's raise of the generation was rolled back with it.
    expect((await getDb().order.findUniqueOrThrow({ where: { orderNo } })).fence).toBe(1);
    await getDb().idempotentRecord.deleteMany({ where: { bizType: 'PAYMENT', bizNo: orderNo } });
    expect(await claimOrder(ROW_ONLY, orderNo, 'third', now)).toEqual({ fence: 2 });
  });

  it('on the hot path, sends a date as the moment it is, in any time zone the app runs in, and reads an int as a number', async () => {
    const { orderNo } = await createOrder({});
    const claimedAt = new Date('2026-01-02T03:04:05.678Z');
    const zone = process.env.TZ;
    // node-postgres would send a date in the process's own zone, which a column without one drops.
    process.env.TZ = 'America/New_York';
    try {
      expect(await claimOrder({ stateMachine: true, uniqueConstraint: false }, orderNo, 'first', claimedAt)).toEqual({
        fence: 1,
      });
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    expect((await getDb().order.findUniqueOrThrow({ where: { orderNo } })).claimedAt).toEqual(claimedAt);
  });

  it('on the hot path, names each statement once per process, however many copies of its module (Next.js bundles one a route)', async () => {
    // Two routes' bundles: two copies of lib/db.ts, one pool (on globalThis). A name given to one text by one copy
    // and to another text by the other would be refused on a connection that prepared the first.
    const copies = [];
    for (let i = 0; i < 2; i++) {
      vi.resetModules();
      copies.push(((await import('../../db.ts')) as typeof import('../../db.ts')).hotPath());
    }
    const [first, second] = copies as [ReturnType<typeof hotPath>, ReturnType<typeof hotPath>];
    const mark = randomBytes(4).toString('hex');
    for (let i = 0; i < 5; i++) {
      expect(await first.$queryRaw`SELECT ${`a${mark}`}::text AS "one"`).toEqual([{ one: `a${mark}` }]);
      expect(await second.$queryRaw`SELECT ${i}::int + 1 AS "two"`).toEqual([{ two: i + 1 }]);
    }
  });

  it('on the hot path, where the error arrives as the adapter words it, tells a unique violation from other refusals', async () => {
    const { orderNo } = await createOrder({});
    const now = new Date();
    // Layers 3 and 4 in one statement: the second is refused by layer 3 (the order is no longer PENDING).
    expect(await claimOrder({ stateMachine: true, uniqueConstraint: true }, orderNo, 'first', now)).toEqual({
      fence: 1,
    });
    expect(await claimOrder({ stateMachine: true, uniqueConstraint: true }, orderNo, 'second', now)).toEqual({
      refusedBy: 'stateMachine',
    });
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
