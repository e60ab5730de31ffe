import 'server-only';
// Retention: nothing in the demo may grow without bound. Hourly, what is older than RETENTION_DAYS goes:
// settled orders (PAID, DECLINED) and carts never paid (PENDING), with their card statement, receipts, refunds
// (the merchant's, the back office's requests, the bank's) and dedup rows; outbox rows already relayed; fencing
// tokens nobody raised since; refunds left without their order that no bank saw (pruneOrphanRefunds). A payment or
// a refund still in doubt is kept whatever its age, wherever a layer keeps the doubt (the order or the refund
// PROCESSING or UNKNOWN, a dedup row without an outcome, a charge the order has not recorded): the reconciler has to
// settle it first. In batches, so one run never holds long locks. What it cannot see: a payment that has claimed nothing in PostgreSQL (layers
// 3 and 4 off) and has not reached the bank yet, on an order older than RETENTION_DAYS, at the moment it runs.
import { bankHasOwnDatabase, getBankDb, getDb } from '../db.ts';
import { Prisma } from '../generated/prisma/client.ts';

export type Pruned = {
  orders: number;
  charges: number;
  refunds: number;
  receipts: number;
  dedupRows: number;
  outbox: number;
  fences: number;
};

/**
 * Orders a batch: each batch is one statement, which holds a core while it runs (about 1 ms an order here); 1,000
 * at once raised the payments' p99 threefold beside it in one run (a second of a core gone at a time), 200 keep
 * each such hold to a fifth of a second (bench/results.md, section 7).
 */
const BATCH = 200;

/**
 * Whether the order `o` is old and settled enough to go. In the candidates' query and again in the DELETE's own
 * WHERE: a row that a payment moved after the candidates were read (a claim raises its generation and
 * updated_at) is judged again as it is then, and kept.
 */
function prunable(olderThan: Date, noChargeToRecord: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`o.created_at < ${olderThan} AND o.updated_at < ${olderThan} AND o.status IN ('PAID', 'DECLINED', 'PENDING')
    -- A payment in doubt is kept wherever a layer keeps the doubt: a dedup row without an outcome (layer 4),
    -- or a charge the order has not recorded (landed or still to land: layer 2 alone, 5 alone, none).
    AND NOT EXISTS (
      SELECT 1 FROM idempotent_record r WHERE r.biz_type = 'PAYMENT' AND r.biz_no = o.order_no AND r.outcome IS NULL)
    AND ${noChargeToRecord}
    -- A refund in doubt, on its row or its dedup row.
    AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.order_no = o.order_no AND f.status IN ('PROCESSING', 'UNKNOWN'))
    AND NOT EXISTS (
      SELECT 1 FROM idempotent_record r JOIN refunds f ON r.biz_no = f.order_no || '/' || f.refund_key
      WHERE r.biz_type = 'REFUND' AND f.order_no = o.order_no AND r.outcome IS NULL)`;
}

/**
 * With the bank's books in a database of their own, an unpaid order's charge is looked for there, in two steps: a
 * batch of old unpaid orders otherwise prunable, then the bank's statement for them; those it has no charge for may
 * go (the DELETE judges each again). A charge landing between the two on an order older than the window is what
 * the one-statement form cannot see either (a snapshot's), save that an order a payment claims meanwhile has its
 * updated_at raised, and stays.
 */
async function unpaidWithoutCharge(olderThan: Date, only: Prisma.Sql): Promise<string[]> {
  const candidates = await getDb().$queryRaw<Array<{ orderNo: string }>>`
    SELECT o.order_no AS "orderNo" FROM orders o
    WHERE ${prunable(olderThan, Prisma.sql`o.status <> 'PAID'`)} ${only}
    ORDER BY o.created_at LIMIT ${BATCH}`;
  if (candidates.length === 0) return [];
  const orderNos = candidates.map((candidate) => candidate.orderNo);
  const charged = await getBankDb().$queryRaw<Array<{ orderNo: string }>>`
    SELECT DISTINCT merchant_ref AS "orderNo" FROM bank_charges WHERE merchant_ref = ANY(${orderNos}::text[])`;
  const withCharge = new Set(charged.map((charge) => charge.orderNo));
  return orderNos.filter((orderNo) => !withCharge.has(orderNo));
}

/**
 * Prunes what is older than `olderThan`. `orderNos`: only these orders and what hangs on them (an operator's, or
 * the race explorer's own); the outbox and the fencing tokens, which belong to no one order, are then left.
 * `bankApart`: as if the bank's books lived in a database of their own (BANK_DATABASE_URL says so by default).
 */
export async function pruneOldRecords(
  olderThan: Date,
  scope: { orderNos?: string[]; bankApart?: boolean } = {},
): Promise<Pruned> {
  const everything = scope.orderNos === undefined;
  const only = everything ? Prisma.empty : Prisma.sql`AND o.order_no = ANY(${scope.orderNos}::text[])`;
  // The bank's rows are the bank's when its books live apart (BANK_DATABASE_URL): left to it.
  const bankApart = scope.bankApart ?? bankHasOwnDatabase();
  const noChargeToRecord = bankApart
    ? Prisma.sql`(o.status = 'PAID' OR o.order_no = ANY(${await unpaidWithoutCharge(olderThan, only)}::text[]))`
    : Prisma.sql`(o.status = 'PAID' OR NOT EXISTS (SELECT 1 FROM bank_charges c WHERE c.merchant_ref = o.order_no))`;
  const [row] = await getDb().$queryRaw<Array<Record<keyof Pruned, bigint>>>`
    WITH gone AS (
      DELETE FROM orders o
      WHERE o.order_no IN (
          SELECT o.order_no FROM orders o WHERE ${prunable(olderThan, noChargeToRecord)} ${only}
          ORDER BY o.created_at LIMIT ${BATCH})
        AND ${prunable(olderThan, noChargeToRecord)}
      RETURNING o.order_no),
    charges AS (DELETE FROM bank_charges WHERE ${!bankApart} AND merchant_ref IN (SELECT order_no FROM gone) RETURNING id),
    bankRefunds AS (DELETE FROM bank_refunds WHERE charge_id IN (SELECT id FROM charges) RETURNING 1),
    refundRows AS (DELETE FROM refunds WHERE order_no IN (SELECT order_no FROM gone) RETURNING order_no, refund_key),
    requests AS (DELETE FROM refund_requests WHERE order_no IN (SELECT order_no FROM gone) RETURNING 1),
    refundDedup AS (
      DELETE FROM idempotent_record WHERE biz_type = 'REFUND'
        AND biz_no IN (SELECT order_no || '/' || refund_key FROM refundRows)
      RETURNING 1),
    receipts AS (DELETE FROM receipts WHERE order_no IN (SELECT order_no FROM gone) RETURNING 1),
    dedup AS (DELETE FROM idempotent_record WHERE biz_no IN (SELECT order_no FROM gone) RETURNING 1),
    -- = ANY(ARRAY(…)): the batch by its key, oldest first along its index, never a scan of the whole table to join
    -- it (test/scale); its age judged again in the DELETE's own WHERE, as an order's is: a fencing token the bank
    -- raised since it was read must stay (forgotten, a stale attempt's older token would pass).
    outbox AS (
      DELETE FROM outbox WHERE ${everything} AND id = ANY(ARRAY(
          SELECT id FROM outbox WHERE published_at IS NOT NULL AND created_at < ${olderThan}
          ORDER BY created_at LIMIT ${BATCH}))
        AND published_at IS NOT NULL AND created_at < ${olderThan}
      RETURNING 1),
    fences AS (
      DELETE FROM bank_fences WHERE ${everything} AND ${!bankApart} AND lock = ANY(ARRAY(
          SELECT lock FROM bank_fences WHERE updated_at < ${olderThan} ORDER BY updated_at LIMIT ${BATCH}))
        AND updated_at < ${olderThan}
      RETURNING 1)
    SELECT (SELECT count(*) FROM gone) AS orders, (SELECT count(*) FROM charges) AS charges,
      (SELECT count(*) FROM refundRows) AS refunds,
      (SELECT count(*) FROM receipts) AS receipts, (SELECT count(*) FROM dedup) AS "dedupRows",
      (SELECT count(*) FROM outbox) AS outbox, (SELECT count(*) FROM fences) AS fences`;
  const count = (name: keyof Pruned) => Number(row?.[name] ?? 0n);
  return {
    orders: count('orders'),
    charges: count('charges'),
    refunds: count('refunds'),
    receipts: count('receipts'),
    dedupRows: count('dedupRows'),
    outbox: count('outbox'),
    fences: count('fences'),
  };
}

/**
 * Refunds whose order is gone: written after retention pruned it (the refund read the order, retention deleted it,
 * then the refund's row was written), whose attempt died before it gave its claim back (decision 032). No sweep lists
 * them (both of the sweep's queries join the order), and nothing went to a bank under them (a claim the ledger did
 * not count is given back before any bank). Older than the cutoff, no attempt holds them: they go, with their dedup
 * rows, a batch at a time. Only those no bank answered for (requested, claimed, or refused, with no bank refund):
 * one UNKNOWN or SUCCEEDED without its order is kept, as evidence. `orderNos`: only these orders' (a test's).
 */
export async function pruneOrphanRefunds(olderThan: Date, scope: { orderNos?: string[] } = {}): Promise<number> {
  const only = scope.orderNos ? Prisma.sql`AND f.order_no = ANY(${scope.orderNos}::text[])` : Prisma.empty;
  const unanswered = Prisma.sql`f.created_at < ${olderThan} AND f.status IN ('REQUESTED', 'PROCESSING', 'FAILED')
    AND f.bank_refund_id IS NULL`;
  const [row] = await getDb().$queryRaw<Array<{ refunds: bigint }>>`
    WITH orphans AS (
      DELETE FROM refunds f WHERE (f.order_no, f.refund_key) IN (
          SELECT f.order_no, f.refund_key FROM refunds f WHERE ${unanswered} ${only}
            AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.order_no = f.order_no)
          LIMIT ${BATCH})
        -- Judged again as the row is when deleted (a refund that moved it meanwhile is kept), as an order is.
        AND ${unanswered}
      RETURNING f.order_no, f.refund_key),
    dedup AS (
      DELETE FROM idempotent_record WHERE biz_type = 'REFUND'
        AND biz_no IN (SELECT order_no || '/' || refund_key FROM orphans)
      RETURNING 1)
    SELECT count(*) AS refunds FROM orphans`;
  return Number(row?.refunds ?? 0n);
}

/**
 * After each batch, a pause twice as long as the batch took (50 ms at least): retention takes a third of what one
 * connection could, and the payments running meanwhile get the locks, the disk and the cores in between
 * (bench/results.md, section 7: their p99 beside it). Still far faster than a shop makes orders.
 */
const PAUSE_PER_BATCH = 2;
const MIN_PAUSE_MS = 50;

function pauseAfter(started: number): Promise<void> {
  const pause = Math.max(MIN_PAUSE_MS, PAUSE_PER_BATCH * (performance.now() - started));
  return new Promise((resolve) => setTimeout(resolve, pause));
}
/** At most this many batches a run (two million orders): a cutoff in the future must not run it for ever. */
const MAX_BATCHES = 10_000;

/**
 * The hourly job, as of `now`: retention (`retentionDays`; 0 keeps everything), batch after batch until less than
 * a batch is due (one batch an hour kept 24,000 orders a day, a shop at 100 payments a second makes 8.6 million).
 * It is also the dedup table's cleanup: a dedup row lives exactly as long as the order it guards, so no cleanup
 * re-opens a door that the row keeps shut (with layer 4 alone, a row deleted under a PAID order would let the
 * next duplicate charge). Returns what it pruned in all.
 */
export async function runHousekeeping(
  now: Date,
  horizons: { retentionDays: number },
  scope: { orderNos?: string[] } = {},
): Promise<Pruned> {
  const total: Pruned = { orders: 0, charges: 0, refunds: 0, receipts: 0, dedupRows: 0, outbox: 0, fences: 0 };
  if (horizons.retentionDays === 0) return total;
  const olderThan = new Date(now.getTime() - horizons.retentionDays * 86_400_000);
  try {
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const started = performance.now();
      const pruned = await pruneOldRecords(olderThan, scope);
      for (const name of Object.keys(total) as Array<keyof Pruned>) total[name] += pruned[name];
      if (pruned.orders < BATCH && pruned.outbox < BATCH && pruned.fences < BATCH) break;
      await pauseAfter(started);
    }
    // The refunds left without an order, after the orders (a scan of the refunds kept: once a run, not a batch).
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const started = performance.now();
      const orphans = await pruneOrphanRefunds(olderThan, scope);
      total.refunds += orphans;
      if (orphans < BATCH) break;
      await pauseAfter(started);
    }
    return total;
  } catch (error) {
    console.error(`[retention] skipped: ${error instanceof Error ? error.message : error}`);
    return total;
  }
}
