import 'server-only';
// Retention: nothing in the demo may grow without bound. Hourly, what is older than RETENTION_DAYS goes:
// settled orders (PAID, DECLINED) and carts never paid (PENDING), with their card statement, receipts and
// dedup rows; outbox rows already relayed; fencing tokens nobody raised since. An order still in doubt
// (PROCESSING, UNKNOWN) is kept whatever its age: the reconciler has to settle it first. In batches, so one
// run never holds long locks.
import { getDb } from '../db.ts';
import { deleteSettledDedupRecords } from '../defences/dedup.ts';

export type Pruned = {
  orders: number;
  charges: number;
  receipts: number;
  dedupRows: number;
  outbox: number;
  fences: number;
};

const BATCH = 1_000;

export async function pruneOldRecords(olderThan: Date): Promise<Pruned> {
  const [row] = await getDb().$queryRaw<Array<Record<keyof Pruned, bigint>>>`
    WITH gone AS (
      DELETE FROM orders WHERE order_no IN (
        SELECT order_no FROM orders
        WHERE created_at < ${olderThan} AND status IN ('PAID', 'DECLINED', 'PENDING')
        ORDER BY created_at LIMIT ${BATCH})
      RETURNING order_no),
    charges AS (DELETE FROM bank_charges WHERE merchant_ref IN (SELECT order_no FROM gone) RETURNING 1),
    receipts AS (DELETE FROM receipts WHERE order_no IN (SELECT order_no FROM gone) RETURNING 1),
    dedup AS (DELETE FROM idempotent_record WHERE biz_no IN (SELECT order_no FROM gone) RETURNING 1),
    outbox AS (
      DELETE FROM outbox WHERE id IN (
        SELECT id FROM outbox WHERE published_at IS NOT NULL AND created_at < ${olderThan} LIMIT ${BATCH})
      RETURNING 1),
    fences AS (
      DELETE FROM bank_fences WHERE lock IN (
        SELECT lock FROM bank_fences WHERE updated_at < ${olderThan} LIMIT ${BATCH})
      RETURNING 1)
    SELECT (SELECT count(*) FROM gone) AS orders, (SELECT count(*) FROM charges) AS charges,
      (SELECT count(*) FROM receipts) AS receipts, (SELECT count(*) FROM dedup) AS "dedupRows",
      (SELECT count(*) FROM outbox) AS outbox, (SELECT count(*) FROM fences) AS fences`;
  const count = (name: keyof Pruned) => Number(row?.[name] ?? 0n);
  return {
    orders: count('orders'),
    charges: count('charges'),
    receipts: count('receipts'),
    dedupRows: count('dedupRows'),
    outbox: count('outbox'),
    fences: count('fences'),
  };
}

/**
 * The hourly job, as of `now`: the dedup table's cleanup (rows past `dedupRetentionDays`), then retention
 * (`retentionDays`; 0 keeps everything). The reconciler's loop runs it (lib/payments/reconciler-loop.ts).
 */
export async function runHousekeeping(
  now: Date,
  horizons: { retentionDays: number; dedupRetentionDays: number },
): Promise<void> {
  await deleteSettledDedupRecords(getDb(), new Date(now.getTime() - horizons.dedupRetentionDays * 86_400_000)).catch(
    (error: Error) => console.error(`[dedup] cleanup skipped: ${error.message}`),
  );
  if (horizons.retentionDays === 0) return;
  await pruneOldRecords(new Date(now.getTime() - horizons.retentionDays * 86_400_000)).catch((error: Error) =>
    console.error(`[retention] skipped: ${error.message}`),
  );
}
