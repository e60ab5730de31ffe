import 'server-only';
// The simulated card network's refunds. Like its charges, it makes every refund it is asked for (no deduplication
// unless the merchant sends an idempotency key, layer 5) and records each one on the customer's statement
// (bank_refunds); it checks the fencing token of the claim the request was made under; its faults are the same
// (it fails before refunding, is slow, times out after refunding, or refunds after the merchant gave up). And, as
// every processor does, it refuses to refund more in all than the charge: the bank's own bound, beside the
// merchant's ledger (orders.refunded_cents).
import { randomBytes } from 'node:crypto';
import { getBankDb } from '../db.ts';
import type { Fence } from '../defences/fencing.ts';
import { Prisma } from '../generated/prisma/client.ts';
import {
  BANK_TIMEOUT_MS,
  type BankFaults,
  BankFencedError,
  BankKeyInUseError,
  BankTimeoutError,
  BankUnavailableError,
  REPORT_PAGE,
  raiseFence,
  underRaisedFence,
} from './bank.ts';

/** A refund as the bank recorded it. */
export type BankRefund = { id: string; chargeId: string; amountCents: number; createdAt: Date };

/** The bank refused the refund: more than what is left of the charge (or no such charge). Nothing was refunded. */
export class BankRefundRefusedError extends Error {
  constructor(
    readonly reason: 'exceedsCharge' | 'noSuchCharge' | 'declined',
    readonly leftCents: number,
  ) {
    super(`refund refused: ${reason} (${leftCents} cents left)`);
    this.name = 'BankRefundRefusedError';
  }
}

export type RefundRequest = {
  /** The charge refunded. */
  chargeId: string;
  /** The merchant's reference of this refund (`<order no>/<refund key>`). */
  merchantRef: string;
  amountCents: number;
  /** Layer 5: the merchant's idempotency key for this refund. */
  idempotencyKey?: string;
  /** The claim the request is made under. */
  fence?: Fence;
};

/** Refunds part of a charge. Every call that passes its fence is a new refund, unless its key was refunded before. */
export async function refundCharge(
  request: RefundRequest,
  faults: BankFaults,
  now: () => number = Date.now,
): Promise<BankRefund & { replayed: boolean }> {
  if (faults.bankFailure === 'error') throw new BankUnavailableError();
  if (!Number.isInteger(request.amountCents) || request.amountCents <= 0) {
    throw new BankRefundRefusedError('declined', 0);
  }
  const refund = await getBankDb().$transaction(async (tx) => {
    if (request.fence && !(await raiseFence(request.fence, tx))) throw new BankFencedError(request.fence);
    // The charge locked first: its refunds are counted and added one at a time, so their sum never passes it.
    const [charge] = await tx.$queryRaw<Array<{ amountCents: number }>>`
      SELECT amount_cents AS "amountCents" FROM bank_charges WHERE id = ${request.chargeId} FOR UPDATE`;
    if (!charge) throw new BankRefundRefusedError('noSuchCharge', 0);
    const known = request.idempotencyKey ? await refundOfKey(tx, request.idempotencyKey) : undefined;
    if (known) return { ...known, replayed: true };
    const [sum] = await tx.$queryRaw<Array<{ refunded: number }>>`
      SELECT COALESCE(SUM(amount_cents), 0)::int AS refunded FROM bank_refunds WHERE charge_id = ${request.chargeId}`;
    const left = charge.amountCents - (sum?.refunded ?? 0);
    if (request.amountCents > left) throw new BankRefundRefusedError('exceedsCharge', left);
    if (faults.bankFailure === 'decline') throw new BankRefundRefusedError('declined', left);
    return { ...(await insertRefund(tx, request, faults, now)), replayed: false };
  });
  // A key whose first request is still executing (its refund has not landed): like Stripe's 409.
  if (refund.replayed && request.idempotencyKey && refund.createdAt.getTime() > now()) {
    throw new BankKeyInUseError(request.idempotencyKey);
  }
  const latency = Math.min(faults.bankLatencyMs, BANK_TIMEOUT_MS);
  if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
  const late = !refund.replayed && refund.createdAt.getTime() > now();
  if ((!refund.replayed && faults.bankTimeoutAfterCharge) || late || faults.bankLatencyMs > BANK_TIMEOUT_MS) {
    throw new BankTimeoutError(faults.bankLatencyMs > BANK_TIMEOUT_MS ? BANK_TIMEOUT_MS : latency);
  }
  return refund;
}

async function refundOfKey(tx: Prisma.TransactionClient, key: string): Promise<BankRefund | undefined> {
  const [known] = await tx.$queryRaw<BankRefund[]>`
    SELECT id, charge_id AS "chargeId", amount_cents AS "amountCents", created_at AS "createdAt"
    FROM bank_refunds WHERE idempotency_key = ${key}`;
  return known;
}

/** The refund, on the statement now, or later (the lab's late charge: the refund's first attempt only). */
async function insertRefund(
  tx: Prisma.TransactionClient,
  request: RefundRequest,
  faults: BankFaults,
  now: () => number,
): Promise<BankRefund> {
  const id = `re_${randomBytes(12).toString('hex')}`;
  const landsNow = new Date(now());
  const landsAt =
    faults.bankLateChargeMs > 0
      ? Prisma.sql`CASE WHEN EXISTS (SELECT 1 FROM bank_refunds WHERE merchant_ref = ${request.merchantRef})
          THEN ${landsNow}::timestamptz ELSE ${new Date(now() + faults.bankLateChargeMs)}::timestamptz END`
      : Prisma.sql`${landsNow}::timestamptz`;
  const [refund] = await tx.$queryRaw<BankRefund[]>`
    INSERT INTO bank_refunds (id, charge_id, merchant_ref, amount_cents, created_at, idempotency_key, fence_lock)
    VALUES (${id}, ${request.chargeId}, ${request.merchantRef}, ${request.amountCents}, ${landsAt},
      ${request.idempotencyKey ?? null}, ${request.fence?.lock ?? null})
    RETURNING id, charge_id AS "chargeId", amount_cents AS "amountCents", created_at AS "createdAt"`;
  if (!refund) throw new Error('the bank recorded no refund');
  return refund;
}

/**
 * "Did you refund merchant reference X?" Under a fence, the question raises the bank's token for the lock first,
 * as for a charge (bank.ts askBank): no older request can be refunded after it is answered.
 */
export async function askBankRefunds(
  query: { merchantRef: string; fence?: Fence; byLock?: boolean },
  now: () => number = Date.now,
): Promise<{ refunds: BankRefund[]; previousToken: number | null }> {
  const { merchantRef, fence } = query;
  const visible = new Date(now());
  const byLock = query.byLock && fence ? Prisma.sql`AND fence_lock = ${fence.lock}` : Prisma.empty;
  const list = (db: Prisma.TransactionClient) =>
    db.$queryRaw<BankRefund[]>`
      SELECT id, charge_id AS "chargeId", amount_cents AS "amountCents", created_at AS "createdAt" FROM bank_refunds
      WHERE merchant_ref = ${merchantRef} ${byLock} AND created_at <= ${visible} ORDER BY created_at, id`;
  if (!fence) return { refunds: await list(getBankDb()), previousToken: null };
  const { listed, previousToken } = await underRaisedFence(fence, list);
  return { refunds: listed, previousToken };
}

/** The refund the bank made under an idempotency key, if it did (and it has landed). */
export async function refundOfBankKey(key: string, now: () => number = Date.now): Promise<BankRefund | undefined> {
  const [refund] = await getBankDb().$queryRaw<BankRefund[]>`
    SELECT id, charge_id AS "chargeId", amount_cents AS "amountCents", created_at AS "createdAt"
    FROM bank_refunds WHERE idempotency_key = ${key} AND created_at <= ${new Date(now())}`;
  return refund;
}

/** The refunds of an order's charges on the statement: what the customer got back. */
export async function refundsOfOrder(orderNo: string, now: () => number = Date.now): Promise<BankRefund[]> {
  return getBankDb().$queryRaw<BankRefund[]>`
    SELECT r.id, r.charge_id AS "chargeId", r.amount_cents AS "amountCents", r.created_at AS "createdAt"
    FROM bank_refunds r JOIN bank_charges c ON c.id = r.charge_id
    WHERE c.merchant_ref = ${orderNo} AND r.created_at <= ${new Date(now())} ORDER BY r.created_at, r.id`;
}

export type ReportedRefund = BankRefund & { merchantRef: string };

/**
 * The refunds that landed after `landedAfter` and by `landedBy`, oldest first: the bank's report, as settlementReport
 * is for charges, and paged the same way (REPORT_PAGE at most, the page after the refund `after`); for these orders'
 * refunds only if `orderNos` is given.
 */
export async function refundReport(query: {
  landedAfter: Date;
  landedBy: Date;
  orderNos?: string[];
  after?: ReportedRefund;
}): Promise<ReportedRefund[]> {
  const orders = query.orderNos
    ? Prisma.sql`AND split_part(merchant_ref, '/', 1) = ANY(${query.orderNos}::text[])`
    : Prisma.empty;
  const after = query.after
    ? Prisma.sql`AND (created_at, id) > (${query.after.createdAt}::timestamptz, ${query.after.id})`
    : Prisma.empty;
  return getBankDb().$queryRaw`
    SELECT id, charge_id AS "chargeId", merchant_ref AS "merchantRef", amount_cents AS "amountCents",
      created_at AS "createdAt"
    FROM bank_refunds
    WHERE created_at > ${query.landedAfter} AND created_at <= ${query.landedBy} ${orders} ${after}
    ORDER BY created_at, id
    LIMIT ${REPORT_PAGE}`;
}
