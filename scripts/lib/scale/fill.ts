// A database as months of checkouts leave it, made by SQL rather than by the API (a million payments through
// the app would take an hour): settled orders, each with what a paid order leaves behind (its charge on the
// card statement, its PAYMENT dedup row with the first result, its payment.paid event relayed, its receipt and
// RECEIPT row, its fencing token at the bank), every tenth one refunded $5 by a request id (the back office's
// request, the refund, its REFUND dedup row, the bank's refund). Rows look like the pipeline's own, their ages
// spread over the retention window, so that the background jobs find what they find in a shop: nothing in
// doubt, a few rows due. Used by the scale benchmark (scripts/lib/bench/scale.ts) and the test that holds each
// background job to reading only what is due or in doubt (test/scale/background-jobs.int.test.ts).
import type pg from 'pg';

export type Fill = {
  /** Settled orders younger than the retention window: what the jobs must not read. */
  settled: number;
  /** Settled orders past the retention window (`dueDays` old): what retention deletes. */
  due: number;
  /** payment.paid events not relayed yet (on settled orders): what the relay publishes. */
  unpublished: number;
  /** How old a due order is, in days (past a retention of 30). */
  dueDays?: number;
  /** Settled orders are spread over this many days back (within the retention window). */
  spreadDays?: number;
};

const BATCH = 100_000;

/** Inserts the rows of `fill`; returns how many orders in all. Order numbers are `ord_<prefix><n>`. */
export async function fillSettledOrders(db: pg.Pool | pg.Client, fill: Fill, prefix = 's'): Promise<number> {
  const spreadDays = fill.spreadDays ?? 20;
  const dueDays = fill.dueDays ?? 45;
  // Young first, then the due ones, so that every batch is one statement per table.
  const ranges: Array<{ from: number; to: number; age: string }> = [];
  for (let from = 1; from <= fill.settled; from += BATCH) {
    ranges.push({
      from,
      to: Math.min(from + BATCH - 1, fill.settled),
      age: `(i % ${spreadDays * 24}) * interval '1 hour'`,
    });
  }
  if (fill.due > 0) {
    ranges.push({ from: fill.settled + 1, to: fill.settled + fill.due, age: `interval '${dueDays} days'` });
  }
  for (const { from, to, age } of ranges) await fillRange(db, prefix, from, to, age);
  if (fill.unpublished > 0) {
    await db.query(
      `UPDATE outbox SET published_at = NULL, stream_id = NULL WHERE id IN (SELECT id FROM outbox ORDER BY id DESC LIMIT $1)`,
      [fill.unpublished],
    );
  }
  return fill.settled + fill.due;
}

async function fillRange(db: pg.Pool | pg.Client, prefix: string, from: number, to: number, age: string) {
  // One CTE per range: the series, its order numbers and times, and every table's rows made from it.
  const series = `
    WITH s AS (
      SELECT i, 'ord_${prefix}' || lpad(i::text, 12, '0') AS order_no, 'ch_${prefix}' || lpad(i::text, 12, '0') AS charge_id,
        now() - ${age} - interval '1 minute' AS at
      FROM generate_series(${from}, ${to}) AS i)`;
  const statements = [
    `INSERT INTO orders (order_no, amount_cents, status, fence, first_fence, charge_id, paid_at, owner, refunded_cents,
       created_at, updated_at)
     SELECT order_no, 4200, 'PAID', 1, 1, charge_id, at, 'c.shop', CASE WHEN i % 10 = 0 THEN 500 ELSE 0 END, at, at FROM s`,
    `INSERT INTO bank_charges (id, merchant_ref, amount_cents, created_at, idempotency_key, fence_lock)
     SELECT charge_id, order_no, 4200, at, 'pay:' || order_no, 'order:' || order_no FROM s`,
    `INSERT INTO bank_fences (lock, token, updated_at) SELECT 'order:' || order_no, 1, at FROM s`,
    `INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at, outcome, created_at)
     SELECT 'PAYMENT', order_no, 'pay_' || i, 1, 1, at,
       jsonb_build_object('status', 'PAID', 'orderNo', order_no, 'amountCents', 4200, 'chargeId', charge_id,
         'paidAt', at), at FROM s
     UNION ALL
     SELECT 'RECEIPT', order_no, 'receipts-scale', 0, NULL, at, NULL, at FROM s`,
    `INSERT INTO outbox (topic, key, payload, created_at, published_at, stream_id, charge_id)
     SELECT 'payment.paid', order_no, jsonb_build_object('orderNo', order_no, 'chargeId', charge_id, 'amountCents', 4200),
       at, at, (extract(epoch FROM at) * 1000)::bigint || '-0', charge_id FROM s`,
    `INSERT INTO receipts (order_no, charge_id, amount_cents, consumer, sent_at)
     SELECT order_no, charge_id, 4200, 'receipts-scale', at FROM s`,
    // Every tenth order: one $5 refund by a request id, made.
    `INSERT INTO refund_requests (id, order_no, opened_by, created_at)
     SELECT 'rq_${prefix}' || lpad(i::text, 12, '0'), order_no, 's.back-office', at FROM s WHERE i % 10 = 0`,
    `INSERT INTO refunds (order_no, refund_key, amount_cents, status, fence, first_fence, reserved, bank_refund_id,
       refunded_at, caller, created_at, updated_at)
     SELECT order_no, 'rq_${prefix}' || lpad(i::text, 12, '0'), 500, 'SUCCEEDED', 1, 1, true,
       're_${prefix}' || lpad(i::text, 12, '0'), at, 's.back-office', at, at FROM s WHERE i % 10 = 0`,
    `INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at, outcome, created_at)
     SELECT 'REFUND', order_no || '/rq_${prefix}' || lpad(i::text, 12, '0'), 'rf_' || i, 1, 1, at,
       jsonb_build_object('status', 'SUCCEEDED', 'orderNo', order_no, 'amountCents', 500), at FROM s WHERE i % 10 = 0`,
    `INSERT INTO bank_refunds (id, charge_id, merchant_ref, amount_cents, created_at, idempotency_key, fence_lock)
     SELECT 're_${prefix}' || lpad(i::text, 12, '0'), charge_id, order_no || '/rq_${prefix}' || lpad(i::text, 12, '0'), 500,
       at, 'refund:' || order_no || '/rq_${prefix}' || lpad(i::text, 12, '0'), 'refund:' || order_no FROM s WHERE i % 10 = 0`,
  ];
  for (const statement of statements) await db.query(`${series} ${statement}`);
}

/**
 * The tables vacuumed and their statistics fresh, as autovacuum leaves them in a shop. `quiet`: no autovacuum
 * afterwards either, so that nothing but the job reads them between two readings of the counters (the test's).
 */
export async function settle(db: pg.Pool | pg.Client, options: { quiet?: boolean } = {}): Promise<void> {
  if (options.quiet)
    for (const table of TABLES) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  await db.query(`VACUUM ANALYZE ${TABLES.join(', ')}`);
}

export const TABLES = [
  'orders',
  'bank_charges',
  'bank_fences',
  'idempotent_record',
  'outbox',
  'receipts',
  'refund_requests',
  'refunds',
  'bank_refunds',
] as const;
