import 'server-only';
// Layers 3 and 4's store for refunds: every SQL statement on a refund's claim columns, its dedup row (REFUND,
// `<order no>/<refund key>`) and its amount on the order's ledger (orders.refunded_cents), each named after its
// transition. The ledger moves in the same statement as the claim it belongs to: a claim made puts the refund's
// amount on it (the database's CHECK refuses it past the order's amount: the last millimetre), a claim given back
// or refused by the bank takes it off, a refund made or in doubt keeps it. `reserved` on the refund's row says
// that the claim has put its amount there, so that it is taken off once.
//   1. an attempt's own: record the refund, claim, renew, record the outcome, release, keep in doubt (each
//      conditional on the attempt's id and token, one statement each), and the ledger of an unguarded attempt;
//   2. the recovery path's (lib/refunds/reconcile.ts decides, these write): read, take over, settle, release,
//      resume, leave in doubt, complete a stale row, and the sweep's scan.
// The recovery path's writes run in one transaction each, the refund's row locked first, its dedup row second
// and the order's row (the ledger) last: the order every statement here takes them in.
import { getDb, hotPath } from '../../db.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import type { ClaimState } from '../fencing.ts';
import type { Layer, Layers } from '../layers.ts';
import { parseRefundOutcome, type RefundHold, type RefundOutcome, refundReference } from '../refund.ts';
import { isUniqueViolation } from '../unique-key.ts';
import { REFUND, type RefundStatus } from './transitions.ts';

type Tx = Prisma.TransactionClient;
const { statusesAllowing, targetOf } = REFUND;

/** Which of layers 3 and 4 a refund's claim stands for. */
export type DatabaseLayers = Pick<Layers, 'stateMachine' | 'uniqueConstraint'>;

/** A refund, as its identity: the order and the key its strategy made. */
export type RefundRef = { orderNo: string; refundKey: string };

/** The lock name a refund's fencing token is checked against at the bank. */
export function refundLock(ref: RefundRef): string {
  return `refund:${refundReference(ref.orderNo, ref.refundKey)}`;
}

// ─── 1. An attempt's claim ───

/**
 * The refund, recorded as asked for (REQUESTED) unless it is already: the amount it was recorded with. A refund is
 * for one amount: the same identity with another is not the same refund (the caller is told so).
 */
export async function recordRefund(ref: RefundRef, amountCents: number, caller: string): Promise<number> {
  const [row] = await hotPath().$queryRaw<Array<{ amountCents: number }>>`
    WITH made AS (
      INSERT INTO refunds (order_no, refund_key, amount_cents, caller, updated_at)
      VALUES (${ref.orderNo}, ${ref.refundKey}, ${amountCents}, ${caller}, now())
      ON CONFLICT (order_no, refund_key) DO NOTHING
      RETURNING amount_cents)
    SELECT amount_cents AS "amountCents" FROM made
    UNION ALL
    SELECT amount_cents FROM refunds WHERE order_no = ${ref.orderNo} AND refund_key = ${ref.refundKey}
    LIMIT 1`;
  if (row) return row.amountCents;
  // Made by a concurrent request this statement waited for, after its snapshot: read it now.
  const [made] = await getDb().$queryRaw<Array<{ amountCents: number }>>`
    SELECT amount_cents AS "amountCents" FROM refunds WHERE order_no = ${ref.orderNo} AND refund_key = ${ref.refundKey}`;
  if (!made) throw new Error(`the refund ${ref.refundKey} of ${ref.orderNo} was not recorded`);
  return made.amountCents;
}

/**
 * What an attempt's claim came to: its fencing token, the layer that refused it, the ledger's refusal, or no order
 * to put it on (retention pruned it since the attempt read it).
 */
export type RefundClaimTaken = { fence: number } | { refusedBy: Layer } | { exceeds: true } | { gone: true };

/**
 * An attempt claims the refund, with the statement its layers make (layer 3's conditional update, layer 4's dedup
 * row, or both), and puts its amount on the order's ledger in the same statement. "0 rows" is layer 3's refusal
 * (layer 4's alone, when the refund's amount is already on the ledger); a unique violation is layer 4's; the
 * ledger's CHECK refuses the whole statement when the refunds would pass the charge. A claim with no order to count
 * it on (retention pruned the order since the attempt read it; the refund's row, written after retention's snapshot,
 * outlived it) is given back at once, before any bank: its refund would be counted nowhere, and no sweep would find it.
 * Not a lock on the order first: every writer here locks the refund's row before the order's (releaseRefundClaim).
 */
export async function claimRefund(
  layers: DatabaseLayers,
  ref: RefundRef,
  attemptId: string,
  now: Date,
): Promise<RefundClaimTaken> {
  const claimed = layers.stateMachine
    ? Prisma.sql`UPDATE refunds SET status = ${targetOf('claim')}::refund_status, attempt_id = ${attemptId},
          claimed_at = ${now}, unknown_since = NULL, fence = fence + 1, first_fence = fence + 1, reserved = true,
          updated_at = now()
        WHERE order_no = ${ref.orderNo} AND refund_key = ${ref.refundKey} AND NOT reserved
          AND status = ANY(${statusesAllowing('claim')}::refund_status[])
        RETURNING order_no, refund_key, fence, amount_cents`
    : // Layer 4 alone: the refund's generation rises and its amount goes on the ledger, then the dedup row: a second
      // claim does the same and the unique key refuses it (P2002), the whole statement with it, the ledger too.
      Prisma.sql`UPDATE refunds SET fence = fence + 1, reserved = true, updated_at = now()
        WHERE order_no = ${ref.orderNo} AND refund_key = ${ref.refundKey}
          AND status = ANY(${statusesAllowing('claim')}::refund_status[])
        RETURNING order_no, refund_key, fence, amount_cents`;
  const dedup = layers.uniqueConstraint
    ? Prisma.sql`INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at)
        SELECT 'REFUND', order_no || '/' || refund_key, ${attemptId}, fence, fence, ${now} FROM claim
        RETURNING fence`
    : Prisma.sql`SELECT fence FROM claim`;
  try {
    const [row] = await hotPath().$queryRaw<Array<{ fence: number; ledger: number }>>`
      WITH claim AS (${claimed}),
      ledger AS (
        UPDATE orders o SET refunded_cents = o.refunded_cents + c.amount_cents, updated_at = now()
        FROM claim c WHERE o.order_no = c.order_no
        RETURNING 1),
      held AS (${dedup})
      SELECT (SELECT fence FROM held) AS fence, (SELECT count(*) FROM ledger)::int AS ledger`;
    if (row?.fence !== undefined && row.fence !== null) {
      if (row.ledger === 1) return { fence: row.fence };
      await releaseRefundClaim({ ...ref, attemptId, fence: row.fence });
      return { gone: true };
    }
    return { refusedBy: layers.stateMachine ? 'stateMachine' : 'uniqueConstraint' };
  } catch (error) {
    if (isUniqueViolation(error)) return { refusedBy: 'uniqueConstraint' };
    if (isLedgerViolation(error)) return { exceeds: true };
    throw error;
  }
}

/** The ledger's CHECK refused the statement: the order's refunds would pass its amount (or go below zero). */
export function isLedgerViolation(error: unknown): boolean {
  const cause =
    error instanceof Error && error.name === 'DriverAdapterError'
      ? (error.cause as { code?: string; message?: string } | undefined)
      : (error as { meta?: { driverAdapterError?: { cause?: { code?: string; message?: string } } } }).meta
          ?.driverAdapterError?.cause;
  return cause?.code === '23514' && (cause.message ?? '').includes('orders_refunded_within_amount');
}

/** What is left to refund of an order: its amount less its ledger (refunds made, claimed or in doubt). */
export async function leftToRefund(orderNo: string): Promise<number> {
  const [row] = await getDb().$queryRaw<Array<{ left: number }>>`
    SELECT amount_cents - refunded_cents AS left FROM orders WHERE order_no = ${orderNo}`;
  return row?.left ?? 0;
}

/**
 * Layers 3 and 4 off: nothing claims the refund, but the ledger still counts what each attempt asks the bank for:
 * its amount goes on it before the bank (refused past the charge), and comes off if nothing moved. The refund's row
 * is marked `reserved` in the same statement: its amounts are on the ledger, attempt by attempt, so the bank's books
 * (recordUnrecordedRefund), finding a refund of it that no attempt recorded (one died after the bank), count nothing
 * again. Without a claim the mark is never taken off: an attempt's own amount is all it gives back.
 */
export async function reserveUnguarded(ref: RefundRef, amountCents: number): Promise<'reserved' | 'exceeds' | 'gone'> {
  try {
    const counted = await hotPath().$queryRaw<unknown[]>`
      WITH mark AS (UPDATE refunds SET reserved = true, updated_at = now() WHERE ${whereRefund(ref)} RETURNING 1)
      UPDATE orders SET refunded_cents = refunded_cents + ${amountCents}, updated_at = now()
      WHERE order_no = ${ref.orderNo} RETURNING 1`;
    // No order to count it on: retention pruned it since the attempt read it (as for a claim, claimRefund). Its
    // refund's row is left marked, an orphan nothing reads.
    return counted.length === 1 ? 'reserved' : 'gone';
  } catch (error) {
    if (isLedgerViolation(error)) return 'exceeds';
    throw error;
  }
}

export async function unreserveUnguarded(orderNo: string, amountCents: number): Promise<void> {
  await getDb().$executeRaw`
    UPDATE orders SET refunded_cents = refunded_cents - ${amountCents}, updated_at = now() WHERE order_no = ${orderNo}`;
}

/** Renews the attempt's claims (after a long pause, before the bank); false when it lost one of them. */
export async function renewRefundClaim(hold: RefundHold, layers: DatabaseLayers, now: Date): Promise<boolean> {
  const bizNo = refundReference(hold.orderNo, hold.refundKey);
  const [renewed] = await getDb().$queryRaw<Array<{ refund: number; row: number }>>`
    WITH r AS (
      UPDATE refunds SET claimed_at = ${now}
      WHERE order_no = ${hold.orderNo} AND refund_key = ${hold.refundKey} AND attempt_id = ${hold.attemptId}
        AND fence = ${hold.fence} AND status = 'PROCESSING'
      RETURNING 1),
    d AS (
      UPDATE idempotent_record SET claimed_at = ${now}
      WHERE biz_type = 'REFUND' AND biz_no = ${bizNo} AND owner = ${hold.attemptId} AND fence = ${hold.fence}
        AND outcome IS NULL
      RETURNING 1)
    SELECT (SELECT count(*) FROM r)::int AS refund, (SELECT count(*) FROM d)::int AS row`;
  return (!layers.stateMachine || renewed?.refund === 1) && (!layers.uniqueConstraint || renewed?.row === 1);
}

/**
 * Nothing moved (the bank failed before refunding, or a later defence stopped the attempt): the attempt gives its
 * claims back, and the refund's amount comes off the ledger, once, in the same statement.
 */
export async function releaseRefundClaim(hold: RefundHold): Promise<void> {
  const bizNo = refundReference(hold.orderNo, hold.refundKey);
  await getDb().$transaction(async (tx) => {
    // The refund's row first, then its dedup row, then the order's: the lock order of every writer here.
    await tx.$queryRaw`SELECT 1 FROM refunds WHERE ${whereRefund(hold)} FOR UPDATE`;
    await tx.$executeRaw`
      WITH r AS (
        UPDATE refunds SET reserved = false, updated_at = now(),
          status = (CASE WHEN status = 'PROCESSING' THEN ${targetOf('failedBeforeRefund')} ELSE status::text END)::refund_status,
          attempt_id = NULL, claimed_at = NULL
        WHERE ${whereRefund(hold)} AND fence = ${hold.fence} AND reserved
          AND ((attempt_id = ${hold.attemptId} AND status = ANY(${statusesAllowing('failedBeforeRefund')}::refund_status[]))
            OR (attempt_id IS NULL AND status = 'REQUESTED'))
        RETURNING amount_cents),
      d AS (
        DELETE FROM idempotent_record
        WHERE biz_type = 'REFUND' AND biz_no = ${bizNo} AND owner = ${hold.attemptId} AND fence = ${hold.fence}
          AND outcome IS NULL
        RETURNING 1)
      UPDATE orders SET refunded_cents = refunded_cents - (SELECT amount_cents FROM r), updated_at = now()
      WHERE order_no = ${hold.orderNo} AND EXISTS (SELECT 1 FROM r)`;
  });
}

/**
 * The bank did not answer: the outcome is unknown. The claim is kept in doubt (the refund UNKNOWN, the dedup row
 * without an outcome, its amount on the ledger), and let go of: the reconciler may take it over at once.
 */
export async function keepRefundClaimUnknown(hold: RefundHold, now: Date): Promise<void> {
  const bizNo = refundReference(hold.orderNo, hold.refundKey);
  await getDb().$executeRaw`
    WITH r AS (
      UPDATE refunds SET status = ${targetOf('timedOut')}::refund_status, attempt_id = NULL, unknown_since = ${now},
        updated_at = now()
      WHERE order_no = ${hold.orderNo} AND refund_key = ${hold.refundKey} AND attempt_id = ${hold.attemptId}
        AND fence = ${hold.fence} AND status = ANY(${statusesAllowing('timedOut')}::refund_status[])
      RETURNING 1)
    UPDATE idempotent_record SET owner = NULL, unknown_since = ${now}
    WHERE biz_type = 'REFUND' AND biz_no = ${bizNo} AND owner = ${hold.attemptId} AND fence = ${hold.fence}
      AND outcome IS NULL`;
}

/** The columns of a refund's outcome, for an UPDATE's SET. */
function outcomeColumns(outcome: RefundOutcome): Prisma.Sql {
  return outcome.status === 'SUCCEEDED'
    ? Prisma.sql`bank_refund_id = ${outcome.refundId}, refunded_at = ${new Date(outcome.refundedAt)}`
    : Prisma.sql`failure_reason = ${outcome.reason}, reserved = false`;
}

/**
 * Records the bank's answer as one statement: the refund's move (layer 3: only under this attempt's claim), the
 * outcome on the dedup row (layer 4: only under this attempt's claim), and, for a refund the bank refused, its
 * amount off the ledger (once: only if it was on it). Returns whether the attempt's claim was still its own.
 * Without layer 3 nothing guards the refund's row: the last attempt to finish writes its outcome over the first's.
 */
export async function recordRefundOutcome(
  ref: RefundRef,
  outcome: RefundOutcome,
  hold: RefundHold | undefined,
  layers: DatabaseLayers,
): Promise<boolean> {
  const event = outcome.status === 'SUCCEEDED' ? 'refunded' : 'refused';
  const bizNo = refundReference(ref.orderNo, ref.refundKey);
  const failed = outcome.status === 'FAILED';
  const claimed = (holder: Prisma.Sql) =>
    hold ? Prisma.sql`AND ${holder} = ${hold.attemptId} AND fence = ${hold.fence}` : Prisma.sql`AND FALSE`;
  // Every condition is on the row written (re-checked if another statement moved it meanwhile): layer 3's claim
  // (holder, token, status); layer 4's alone, the row's generation, which a takeover raises. A refusal takes the
  // amount off the ledger, so only from a row that has it on. Unguarded (no claim: layers 3 and 4 off, or layer 2
  // alone recording what it found), the last write wins, but a refusal never lands on a refund made.
  const guard = layers.stateMachine
    ? Prisma.sql`${claimed(Prisma.sql`attempt_id`)} AND status = ANY(${statusesAllowing(event)}::refund_status[])
        ${failed ? Prisma.sql`AND reserved` : Prisma.empty}`
    : hold
      ? Prisma.sql`AND fence = ${hold.fence} AND status NOT IN ('SUCCEEDED', 'FAILED')
          ${failed ? Prisma.sql`AND reserved` : Prisma.empty}`
      : failed
        ? Prisma.sql`AND status <> 'SUCCEEDED'`
        : Prisma.empty;
  const dedup = layers.uniqueConstraint
    ? Prisma.sql`UPDATE idempotent_record SET outcome = ${JSON.stringify(outcome)}::jsonb
        WHERE biz_type = 'REFUND' AND biz_no = ${bizNo} AND outcome IS NULL ${claimed(Prisma.sql`owner`)}
        RETURNING 1`
    : Prisma.sql`SELECT 1 WHERE FALSE`;
  const [recorded] = await hotPath().$queryRaw<Array<{ refund: number; row: number }>>`
    WITH moved AS (
      UPDATE refunds SET status = ${targetOf(event)}::refund_status, ${outcomeColumns(outcome)}, attempt_id = NULL,
        claimed_at = NULL, unknown_since = NULL, updated_at = now()
      WHERE order_no = ${ref.orderNo} AND refund_key = ${ref.refundKey} ${guard}
      RETURNING amount_cents),
    dedup AS (${dedup}),
    ledger AS (
      UPDATE orders SET refunded_cents = refunded_cents - (SELECT amount_cents FROM moved), updated_at = now()
      WHERE order_no = ${ref.orderNo} AND ${failed && hold !== undefined} AND EXISTS (SELECT 1 FROM moved)
      RETURNING 1)
    SELECT (SELECT count(*) FROM moved)::int AS refund, (SELECT count(*) FROM dedup)::int AS row`;
  return (!layers.stateMachine || recorded?.refund === 1) && (!layers.uniqueConstraint || recorded?.row === 1);
}

// ─── 2. The recovery path ───

/** A refund as the recovery path inspects it: its state, and its claims. */
export type RefundClaimView = RefundRef & {
  amountCents: number;
  status: RefundStatus;
  fence: number;
  reserved: boolean;
  /** The order's own lab settings and owner: the lease comes from them, as a payment's does. */
  lab: unknown;
  owner: string | null;
  /** The final outcome, when the refund or its dedup row records one. */
  recorded: RefundOutcome | undefined;
  /** Layer 3's claim: the refund PROCESSING or UNKNOWN. */
  refund: ClaimState | null;
  /** Layer 4's claim: a dedup row without an outcome. */
  row: ClaimState | null;
  /** The dedup row as stored (with an outcome or not), to compare before writing. */
  rowKey: string | null;
};

type ViewRow = {
  orderNo: string;
  refundKey: string;
  amountCents: number;
  status: RefundStatus;
  attemptId: string | null;
  claimedAt: Date | null;
  fence: number;
  firstFence: number | null;
  unknownSince: Date | null;
  reserved: boolean;
  bankRefundId: string | null;
  refundedAt: Date | null;
  failureReason: string | null;
  lab: unknown;
  owner: string | null;
};
type DedupRow = {
  owner: string | null;
  fence: number;
  firstFence: number | null;
  claimedAt: Date;
  unknownSince: Date | null;
  outcome: unknown;
};

const ms = (date: Date | null) => (date ? date.getTime() : null);

/** The outcome a refund's row records, if it is final. */
function outcomeOfRow(row: ViewRow): RefundOutcome | undefined {
  const { orderNo, amountCents } = row;
  if (row.status === 'SUCCEEDED' && row.bankRefundId && row.refundedAt) {
    return {
      status: 'SUCCEEDED',
      orderNo,
      amountCents,
      refundId: row.bankRefundId,
      refundedAt: row.refundedAt.toISOString(),
    };
  }
  if (row.status === 'FAILED')
    return { status: 'FAILED', orderNo, amountCents, reason: row.failureReason ?? 'refused' };
  return undefined;
}

function toView(refund: ViewRow, row: DedupRow | undefined): RefundClaimView {
  const claimed = refund.status === 'PROCESSING' || refund.status === 'UNKNOWN';
  const claimOf = (holder: string | null, r: { fence: number; firstFence: number | null }, claimedAt: number) => ({
    holder,
    fence: r.fence,
    firstFence: r.firstFence ?? r.fence,
    claimedAt,
  });
  return {
    orderNo: refund.orderNo,
    refundKey: refund.refundKey,
    amountCents: refund.amountCents,
    status: refund.status,
    fence: refund.fence,
    reserved: refund.reserved,
    lab: refund.lab,
    owner: refund.owner,
    recorded: outcomeOfRow(refund) ?? parseRefundOutcome(row?.outcome),
    refund: claimed
      ? { ...claimOf(refund.attemptId, refund, ms(refund.claimedAt) ?? 0), unknownSince: ms(refund.unknownSince) }
      : null,
    row:
      row && row.outcome === null
        ? { ...claimOf(row.owner, row, row.claimedAt.getTime()), unknownSince: ms(row.unknownSince) }
        : null,
    rowKey: row ? JSON.stringify([row.owner, row.fence, row.claimedAt.getTime(), row.outcome !== null]) : null,
  };
}

const REFUND_COLUMNS = Prisma.sql`r.order_no AS "orderNo", r.refund_key AS "refundKey", r.amount_cents AS "amountCents",
  r.status, r.attempt_id AS "attemptId", r.claimed_at AS "claimedAt", r.fence, r.first_fence AS "firstFence",
  r.unknown_since AS "unknownSince", r.reserved, r.bank_refund_id AS "bankRefundId", r.refunded_at AS "refundedAt",
  r.failure_reason AS "failureReason", o.lab, o.owner`;
const DEDUP_COLUMNS = Prisma.sql`owner, fence, first_fence AS "firstFence", claimed_at AS "claimedAt",
  unknown_since AS "unknownSince", outcome`;

async function selectView(
  db: Tx,
  ref: RefundRef,
  lock: 'none' | 'wait' | 'skip',
): Promise<RefundClaimView | undefined> {
  const forUpdate = lock === 'none' ? Prisma.empty : Prisma.sql`FOR UPDATE OF r`;
  const onRefund = lock === 'skip' ? Prisma.sql`FOR UPDATE OF r SKIP LOCKED` : forUpdate;
  // The refund's row first, then its dedup row: the lock order of every writer (the order's row comes last).
  const [refund] = await db.$queryRaw<ViewRow[]>`
    SELECT ${REFUND_COLUMNS} FROM refunds r JOIN orders o ON o.order_no = r.order_no
    WHERE r.order_no = ${ref.orderNo} AND r.refund_key = ${ref.refundKey} ${onRefund}`;
  if (!refund) return undefined;
  const [row] = await db.$queryRaw<DedupRow[]>`
    SELECT ${DEDUP_COLUMNS} FROM idempotent_record
    WHERE biz_type = 'REFUND' AND biz_no = ${refundReference(ref.orderNo, ref.refundKey)}
    ${lock === 'none' ? Prisma.empty : Prisma.sql`FOR UPDATE`}`;
  return toView(refund, row);
}

/** The refund and its claims, as they are now (no lock). */
export async function readRefundClaim(ref: RefundRef): Promise<RefundClaimView | undefined> {
  return selectView(getDb(), ref, 'none');
}

/** The claim that decides: the refund's (layer 3) if it has one, else the dedup row's (layer 4). */
export function refundClaimOf(view: RefundClaimView): ClaimState | null {
  return view.refund ?? view.row;
}

function sameClaim(a: RefundClaimView, b: RefundClaimView): boolean {
  return (
    a.status === b.status &&
    a.fence === b.fence &&
    a.reserved === b.reserved &&
    JSON.stringify(a.refund) === JSON.stringify(b.refund) &&
    a.rowKey === b.rowKey
  );
}

function heldBy(view: RefundClaimView, hold: RefundHold): boolean {
  const claims = [view.refund, view.row].filter((claim) => claim !== null);
  return (
    view.fence === hold.fence &&
    claims.length > 0 &&
    claims.every((claim) => claim.holder === hold.attemptId && claim.fence === hold.fence)
  );
}

/** Runs `write` with the refund and its dedup row locked, if `check` still holds for them. */
async function whileLocked<T>(
  ref: RefundRef,
  check: (current: RefundClaimView) => boolean,
  write: (tx: Tx, current: RefundClaimView) => Promise<T>,
  lock: 'wait' | 'skip' = 'wait',
): Promise<T | undefined> {
  return getDb().$transaction(async (tx) => {
    const current = await selectView(tx, ref, lock);
    return current && check(current) ? write(tx, current) : undefined;
  });
}

const whereRefund = (ref: RefundRef) => Prisma.sql`order_no = ${ref.orderNo} AND refund_key = ${ref.refundKey}`;
const whereRow = (ref: RefundRef) =>
  Prisma.sql`biz_type = 'REFUND' AND biz_no = ${refundReference(ref.orderNo, ref.refundKey)}`;

/**
 * Takes over the claim judged dead in `seen`, for `taker`, only if the refund and its dedup row are still exactly
 * as seen: the token rises (the old holder's bank calls are refused once the bank has been asked under the new
 * one), the refund becomes UNKNOWN (in doubt until the bank answers). Returns the taker's hold, or undefined.
 */
export async function takeOverRefundClaim(
  seen: RefundClaimView,
  taker: string,
  now: Date,
): Promise<RefundHold | undefined> {
  return whileLocked(
    seen,
    (current) => sameClaim(current, seen),
    async (tx, current) => {
      const fence = current.fence + 1;
      const claimed = current.refund !== null;
      await tx.$executeRaw`
        UPDATE refunds SET fence = ${fence}, updated_at = now(),
          status = ${claimed ? Prisma.sql`${targetOf('takenOver')}::refund_status` : Prisma.sql`status`},
          attempt_id = ${claimed ? taker : null}, claimed_at = ${claimed ? now : null},
          first_fence = ${claimed ? Prisma.sql`COALESCE(first_fence, fence)` : Prisma.sql`first_fence`}
        WHERE ${whereRefund(seen)}`;
      if (current.row) {
        await tx.$executeRaw`
          UPDATE idempotent_record SET owner = ${taker}, fence = ${fence}, claimed_at = ${now},
            first_fence = COALESCE(first_fence, fence)
          WHERE ${whereRow(seen)}`;
      }
      return { orderNo: seen.orderNo, refundKey: seen.refundKey, attemptId: taker, fence };
    },
    'skip',
  );
}

/** The bank has the refund: the refund SUCCEEDED by it, under the taker's claim. False if it lost the claim. */
export async function settleRefundClaim(
  hold: RefundHold,
  outcome: RefundOutcome & { status: 'SUCCEEDED' },
): Promise<boolean> {
  const settled = await whileLocked(
    hold,
    (current) => heldBy(current, hold),
    async (tx, current) => {
      await tx.$executeRaw`
        UPDATE refunds SET status = ${targetOf('reconciledRefunded')}::refund_status, ${outcomeColumns(outcome)},
          attempt_id = NULL, claimed_at = NULL, unknown_since = NULL, updated_at = now()
        WHERE ${whereRefund(hold)}`;
      if (current.row) {
        await tx.$executeRaw`
          UPDATE idempotent_record SET outcome = ${JSON.stringify(outcome)}::jsonb WHERE ${whereRow(hold)}`;
      }
      return true;
    },
  );
  return settled === true;
}

/**
 * The taker's writes, under its claim only (holder and token, the rows locked): `refund` sets these columns on
 * the refund when it is the claim (layer 3), `row` on the dedup row, or deletes it; `unreserve` takes the
 * refund's amount off the ledger (once: only if it is on it). False when the taker lost the claim meanwhile.
 */
async function underTakenClaim(
  hold: RefundHold,
  writes: { refund: Prisma.Sql; row: Prisma.Sql | 'delete'; unreserve?: boolean },
): Promise<boolean> {
  const written = await whileLocked(
    hold,
    (current) => heldBy(current, hold),
    async (tx, current) => {
      if (current.refund)
        await tx.$executeRaw`UPDATE refunds SET ${writes.refund}, updated_at = now() WHERE ${whereRefund(hold)}`;
      if (current.row) {
        await (writes.row === 'delete'
          ? tx.$executeRaw`DELETE FROM idempotent_record WHERE ${whereRow(hold)}`
          : tx.$executeRaw`UPDATE idempotent_record SET ${writes.row} WHERE ${whereRow(hold)}`);
      }
      if (writes.unreserve && current.reserved) {
        await tx.$executeRaw`UPDATE refunds SET reserved = false, updated_at = now() WHERE ${whereRefund(hold)}`;
        await tx.$executeRaw`
          UPDATE orders SET refunded_cents = refunded_cents - ${current.amountCents}, updated_at = now()
          WHERE order_no = ${hold.orderNo}`;
      }
      return true;
    },
  );
  return written === true;
}

/** No refund, and none can land: nothing moved. The refund is REQUESTED again, its dedup row gone, its amount off. */
export function releaseTakenRefundClaim(hold: RefundHold): Promise<boolean> {
  return underTakenClaim(hold, {
    refund: Prisma.sql`status = ${targetOf('reconciledNoRefund')}::refund_status, attempt_id = NULL, claimed_at = NULL,
      unknown_since = NULL`,
    row: 'delete',
    unreserve: true,
  });
}

/** No refund, and none can land (or the bank's key will catch it): the taker, a refund attempt, goes on. */
export function resumeTakenRefundClaim(hold: RefundHold, now: Date): Promise<boolean> {
  return underTakenClaim(hold, {
    refund: Prisma.sql`status = ${targetOf('resumed')}::refund_status, claimed_at = ${now}, unknown_since = NULL`,
    row: Prisma.sql`claimed_at = ${now}, unknown_since = NULL`,
  });
}

/** No refund yet, and one may still land: the claim stays in doubt, and the taker lets go of it. */
export function leaveRefundClaimInDoubt(hold: RefundHold, since: Date): Promise<boolean> {
  return underTakenClaim(hold, {
    refund: Prisma.sql`attempt_id = NULL, unknown_since = COALESCE(unknown_since, ${since})`,
    row: Prisma.sql`owner = NULL, unknown_since = COALESCE(unknown_since, ${since})`,
  });
}

/** The refund is final but its dedup row has no outcome yet: the row is given it, if it is still the row seen. */
export async function completeStaleRefundRow(seen: RefundClaimView, outcome: RefundOutcome): Promise<void> {
  await whileLocked(
    seen,
    (current) => current.rowKey === seen.rowKey && current.row !== null,
    (tx) => tx.$executeRaw`
      UPDATE idempotent_record SET outcome = ${JSON.stringify(outcome)}::jsonb WHERE ${whereRow(seen)} AND outcome IS NULL`,
  );
}

/**
 * Reconciliation against the bank's books: of the refunds the bank made (by their merchant references, read from
 * the bank's report), those whose refund records nothing and that nothing claims (REQUESTED, no holder): a claim
 * given back while a late refund was still to land, an attempt of no claim (layers 3 and 4 off) that died after
 * the bank. Read as they are now; recordUnrecordedRefund judges each again in its own statement.
 */
export async function unclaimedRefundsOf(merchantRefs: string[]): Promise<RefundRef[]> {
  if (merchantRefs.length === 0) return [];
  return getDb().$queryRaw<RefundRef[]>`
    SELECT r.order_no AS "orderNo", r.refund_key AS "refundKey"
    FROM unnest(${merchantRefs}::text[]) AS m(ref)
      JOIN refunds r ON r.order_no = split_part(m.ref, '/', 1) AND m.ref = r.order_no || '/' || r.refund_key
    WHERE r.status = 'REQUESTED' AND r.attempt_id IS NULL`;
}

/**
 * A refund the bank made that its refund does not record: SUCCEEDED by it, its amount on the ledger unless it
 * is already, only if nothing claims it (as seen in the statement itself, the refund's row locked). Returns whether
 * it moved; false too when the ledger refuses (other refunds in doubt hold the rest: a later round tries again).
 */
export async function recordUnrecordedRefund(
  ref: RefundRef,
  outcome: RefundOutcome & { status: 'SUCCEEDED' },
): Promise<boolean> {
  try {
    const [row] = await getDb().$queryRaw<Array<{ moved: number }>>`
      WITH target AS (
        SELECT reserved, amount_cents FROM refunds
        WHERE ${whereRefund(ref)} AND status = 'REQUESTED' AND attempt_id IS NULL
          AND NOT EXISTS (SELECT 1 FROM idempotent_record WHERE ${whereRow(ref)} AND outcome IS NULL)
        FOR UPDATE),
      moved AS (
        UPDATE refunds SET status = ${targetOf('reconciledRefunded')}::refund_status, ${outcomeColumns(outcome)},
          reserved = true, updated_at = now()
        WHERE ${whereRefund(ref)} AND status = 'REQUESTED' AND attempt_id IS NULL AND EXISTS (SELECT 1 FROM target)
        RETURNING 1),
      ledger AS (
        UPDATE orders SET refunded_cents = refunded_cents + (SELECT amount_cents FROM target), updated_at = now()
        WHERE order_no = ${ref.orderNo} AND EXISTS (SELECT 1 FROM moved) AND NOT (SELECT reserved FROM target)
        RETURNING 1)
      SELECT (SELECT count(*) FROM moved)::int AS moved`;
    return row?.moved === 1;
  } catch (error) {
    if (isLedgerViolation(error)) return false;
    throw error;
  }
}

/**
 * The sweep's candidates, with each order's own lease, `patience` leases long: claims abandoned that long, unknown
 * outcomes nobody holds, and at start-up this instance's previous life's claims. Each is judged again.
 */
export async function findDeadRefundClaims(query: {
  at: Date;
  defaultLeaseMs: number;
  patience: number;
  previousLifeOf?: string;
  orderNos?: string[];
}): Promise<RefundRef[]> {
  const { at, defaultLeaseMs, patience, previousLifeOf, orderNos } = query;
  const leaseOf = (lab: Prisma.Sql) => Prisma.sql`(CASE WHEN (${lab}->'claims'->>'leaseMs') ~ '^[0-9]{1,9}$'
      THEN (${lab}->'claims'->>'leaseMs')::int ELSE ${defaultLeaseMs}::int END) * ${patience}::int * interval '1 millisecond'`;
  const previousLife = (holder: Prisma.Sql) =>
    previousLifeOf ? Prisma.sql`OR ${holder} LIKE ${`${previousLifeOf}%`}` : Prisma.empty;
  const only = orderNos ? Prisma.sql`AND r.order_no = ANY(${orderNos}::text[])` : Prisma.empty;
  const db = getDb();
  const [refunds, rows] = await Promise.all([
    db.$queryRaw<RefundRef[]>`
      SELECT r.order_no AS "orderNo", r.refund_key AS "refundKey"
      FROM refunds r CROSS JOIN LATERAL (SELECT lab FROM orders WHERE order_no = r.order_no LIMIT 1) o
      WHERE r.status IN ('PROCESSING', 'UNKNOWN') ${only}
        AND (r.attempt_id IS NULL OR r.claimed_at < ${at}::timestamptz - ${leaseOf(Prisma.sql`o.lab`)} ${previousLife(Prisma.sql`r.attempt_id`)})
      LIMIT 500`,
    // As the payments' (order-claim/store.ts): the rows in doubt first, by their partial index; then each one's
    // refund and order by their keys (a reference is `<order no>/<refund key>`, and an order number has no slash).
    db.$queryRaw<RefundRef[]>`
      WITH d AS MATERIALIZED (
        SELECT biz_no, owner, claimed_at FROM idempotent_record WHERE biz_type = 'REFUND' AND outcome IS NULL)
      SELECT r.order_no AS "orderNo", r.refund_key AS "refundKey"
      FROM d CROSS JOIN LATERAL (
          SELECT r.order_no, r.refund_key, o.lab FROM refunds r JOIN orders o ON o.order_no = r.order_no
          WHERE r.order_no = split_part(d.biz_no, '/', 1) AND d.biz_no = r.order_no || '/' || r.refund_key LIMIT 1) r
      WHERE (d.owner IS NULL OR d.claimed_at < ${at}::timestamptz - ${leaseOf(Prisma.sql`r.lab`)} ${previousLife(Prisma.sql`d.owner`)}) ${only}
      LIMIT 500`,
  ]);
  const seen = new Map([...refunds, ...rows].map((ref) => [refundReference(ref.orderNo, ref.refundKey), ref]));
  return [...seen.values()];
}
