import 'server-only';
// The simulated card network ("the bank"). It charges every call it receives, exactly like a processor
// that does not deduplicate, and records each charge in its own ledger (bank_charges: the customer's
// card statement). Its faults are those of a real network, which does not die with the merchant: the
// charge is recorded first and the latency falls after it, so a merchant killed during a slow payment
// leaves a charge it never heard of; and a request the merchant gave up on may still be charged later.
// Only lib/payments talks to it.
//
// Two things a caller may send with a charge, and what the bank does with them:
//   - an idempotency key (layer 5, what Stripe offers): one charge per key; a later request with the key
//     gets that charge back instead of a new one;
//   - a fencing token (Kleppmann's fenced resource): the highest token the bank has been shown for a lock
//     (the order's claim, or a request key's) is remembered, and a charge carrying a lower one is refused.
//     No card network takes fencing tokens; this one does so that layers 2-4 can be shown correct on their
//     own. In production, the bank's idempotency key does this job (docs/decisions/012-fenced-recovery.md).
import { randomBytes } from 'node:crypto';
import { getBankDb } from '../db.ts';
import type { Charge, Fence } from '../defences/fencing.ts';
import { BANK_SETTLEMENT_WINDOW_MS } from '../defences/layers.ts';
import { Prisma } from '../generated/prisma/client.ts';

export type { Charge, Fence };
export { BANK_SETTLEMENT_WINDOW_MS };

/** The card was refused: nothing was charged, and retrying the same card will not help. */
export class BankDeclinedError extends Error {
  constructor(readonly reason: string) {
    super(`card declined: ${reason}`);
    this.name = 'BankDeclinedError';
  }
}

/** The bank failed before charging (it said so): no money moved, the payment may be retried. */
export class BankUnavailableError extends Error {
  constructor() {
    super('the bank is unavailable; nothing was charged');
    this.name = 'BankUnavailableError';
  }
}

/** The bank did not answer in time. It may or may not have charged: only reconciliation can tell. */
export class BankTimeoutError extends Error {
  constructor(readonly afterMs: number) {
    super(
      afterMs > 0
        ? `the bank did not answer within ${afterMs} ms; the outcome is unknown`
        : 'the bank’s answer never arrived (the call timed out); the outcome is unknown',
    );
    this.name = 'BankTimeoutError';
  }
}

/** The bank refused the charge: its fencing token is older than one it has seen. Nothing was charged. */
export class BankFencedError extends Error {
  constructor(readonly fence: Fence) {
    super(`fencing token ${fence.token} for ${fence.lock} is stale: another claim took over; nothing was charged`);
    this.name = 'BankFencedError';
  }
}

/** Layer 5: a request with this idempotency key is still being executed; its outcome is not known yet. */
export class BankKeyInUseError extends Error {
  constructor(readonly idempotencyKey: string) {
    super(`a request with the key ${idempotencyKey} is still being processed`);
    this.name = 'BankKeyInUseError';
  }
}

/** How long the merchant waits for the bank before treating the outcome as unknown. */
export const BANK_TIMEOUT_MS = 10_000;

/** The simulated bank's fault points, as a test or the lab sets them for one order (none by default). */
export type BankFaults = {
  /** How long the bank takes to answer, after it has recorded the charge. */
  bankLatencyMs: number;
  /** The bank fails before charging: "decline" (final) or "error" (nothing moved, retry allowed). */
  bankFailure: 'none' | 'decline' | 'error';
  /** The bank records the charge, then the call times out: the merchant does not know the outcome. */
  bankTimeoutAfterCharge: boolean;
  /** The call times out before the bank charges, and the charge lands this many ms later (at most the window). */
  bankLateChargeMs: number;
};

export const NO_BANK_FAULTS: BankFaults = {
  bankLatencyMs: 0,
  bankFailure: 'none',
  bankTimeoutAfterCharge: false,
  bankLateChargeMs: 0,
};

export type ChargeRequest = {
  merchantRef: string;
  amountCents: number;
  /** Layer 5: the merchant's idempotency key for this intent. */
  idempotencyKey?: string;
  /** The claim the request is made under. */
  fence?: Fence;
};

/** A charge, and whether the bank returned it for an idempotency key it had seen instead of charging. */
export type ChargeResult = Charge & { replayed: boolean };

/**
 * Charges the card. Every call that gets past the failure point and the fence is a new charge on the
 * statement, unless it carries an idempotency key the bank has charged for already.
 */
export async function chargeCard(
  request: ChargeRequest,
  faults: BankFaults,
  now: () => number = Date.now,
): Promise<ChargeResult> {
  // Fault point 1: fail before charging. Unreachable: the bank saw nothing of the request.
  if (faults.bankFailure === 'error') throw new BankUnavailableError();
  // A decline is the bank's answer to this request, so it comes after the bank's own checks: a stale fencing
  // token is refused like any charge under it (a stale attempt must not get a final DECLINED over another's
  // charge), and a key the bank has charged for gets that charge back (the statement below returns it).
  if (faults.bankFailure === 'decline') {
    if (request.fence && !(await raiseFence(request.fence))) throw new BankFencedError(request.fence);
    if (!request.idempotencyKey || !(await keyCharged(request.idempotencyKey))) {
      throw new BankDeclinedError('insufficient funds');
    }
  }

  // One statement: the fence is raised (and checked), and the charge inserted only if it held; a key seen
  // before returns its charge (ON CONFLICT ... DO UPDATE returns the existing row, even one committed while
  // this statement waited for it). The charge lands at `created_at`: now, or later (fault point 4: the
  // bank is slow with the order's first charge, and only that one).
  const id = `ch_${randomBytes(12).toString('hex')}`;
  const landsNow = new Date(now());
  const landsAt =
    faults.bankLateChargeMs > 0
      ? Prisma.sql`CASE WHEN EXISTS (SELECT 1 FROM bank_charges WHERE merchant_ref = ${request.merchantRef})
          THEN ${landsNow}::timestamptz ELSE ${new Date(now() + faults.bankLateChargeMs)}::timestamptz END`
      : Prisma.sql`${landsNow}::timestamptz`;
  const { fence, idempotencyKey = null } = request;
  const fenced = fence
    ? Prisma.sql`WITH raised AS (
        INSERT INTO bank_fences (lock, token) VALUES (${fence.lock}, ${BigInt(fence.token)})
        ON CONFLICT (lock) DO UPDATE SET token = GREATEST(bank_fences.token, EXCLUDED.token), updated_at = now()
        RETURNING token)`
    : Prisma.empty;
  const holds = fence ? Prisma.sql`WHERE (SELECT token FROM raised) = ${BigInt(fence.token)}` : Prisma.empty;
  const once = idempotencyKey
    ? Prisma.sql`ON CONFLICT (idempotency_key) DO UPDATE SET idempotency_key = EXCLUDED.idempotency_key`
    : Prisma.empty;
  const [charge] = await getBankDb().$queryRaw<Charge[]>`
    ${fenced}
    INSERT INTO bank_charges (id, merchant_ref, amount_cents, created_at, idempotency_key, fence_lock)
    SELECT ${id}, ${request.merchantRef}, ${request.amountCents}, ${landsAt}, ${idempotencyKey}, ${fence?.lock ?? null}
    ${holds}
    ${once}
    RETURNING id, amount_cents AS "amountCents", created_at AS "createdAt"`;
  if (!charge && fence) throw new BankFencedError(fence);
  if (!charge) throw new Error('the bank recorded no charge');
  const replayed = charge.id !== id;
  // Layer 5, a key whose first request is still executing (its charge has not landed): like Stripe's 409.
  if (replayed && idempotencyKey && charge.createdAt.getTime() > now()) throw new BankKeyInUseError(idempotencyKey);

  // Fault point 2: the answer is slow (the charge is already on the statement, or will be).
  const latency = Math.min(faults.bankLatencyMs, BANK_TIMEOUT_MS);
  if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
  // Fault point 3: the answer to a new charge never arrives. Fault point 4: the merchant gives up before
  // the bank has charged, and the charge lands later anyway (within the settlement window).
  const late = !replayed && charge.createdAt.getTime() > now();
  if ((!replayed && faults.bankTimeoutAfterCharge) || late || faults.bankLatencyMs > BANK_TIMEOUT_MS) {
    throw new BankTimeoutError(faults.bankLatencyMs > BANK_TIMEOUT_MS ? BANK_TIMEOUT_MS : latency);
  }
  return { ...charge, replayed };
}

/** Raises the bank's token for the fence's lock to the fence's, if it is not lower: false when it was stale. */
export async function raiseFence(fence: Fence, db: Prisma.TransactionClient = getBankDb()): Promise<boolean> {
  const [row] = await db.$queryRaw<Array<{ token: bigint }>>`
    INSERT INTO bank_fences (lock, token) VALUES (${fence.lock}, ${BigInt(fence.token)})
    ON CONFLICT (lock) DO UPDATE SET token = GREATEST(bank_fences.token, EXCLUDED.token), updated_at = now()
    RETURNING token`;
  return row?.token === BigInt(fence.token);
}

/** Whether the bank has a charge under this idempotency key (layer 5). */
async function keyCharged(idempotencyKey: string): Promise<boolean> {
  const [row] = await getBankDb().$queryRaw<Array<{ id: string }>>`
    SELECT id FROM bank_charges WHERE idempotency_key = ${idempotencyKey}`;
  return row !== undefined;
}

/** What the bank answers to "did you charge this?". */
export type BankAnswer = {
  /** Every charge on the statement so far, oldest first. A charge that has not landed is not listed. */
  charges: Charge[];
  /**
   * The highest fencing token the bank had been shown for the lock before this question, or null. Below
   * the token of the claim being judged, no request under that claim ever reached the bank: nothing can
   * land later. Otherwise "no charge" is only "no charge yet" until the settlement window has passed.
   */
  previousToken: number | null;
};

/**
 * "Did you charge merchant reference X?" With a fence, the question raises the bank's token for the lock
 * first, so no older request can be charged after it is answered: the answer cannot go stale that way.
 * `byLock`: only the charges made under the fence's lock (a request key's own charges), not the order's.
 */
export async function askBank(
  query: { merchantRef: string; fence?: Fence; byLock?: boolean },
  now: () => number = Date.now,
): Promise<BankAnswer> {
  const { merchantRef, fence } = query;
  const visible = new Date(now());
  const where =
    query.byLock && fence
      ? Prisma.sql`merchant_ref = ${merchantRef} AND fence_lock = ${fence.lock}`
      : Prisma.sql`merchant_ref = ${merchantRef}`;
  const list = (db: Prisma.TransactionClient) =>
    db.$queryRaw<Charge[]>`
      SELECT id, amount_cents AS "amountCents", created_at AS "createdAt" FROM bank_charges
      WHERE ${where} AND created_at <= ${visible} ORDER BY created_at, id`;
  if (!fence) return { charges: await list(getBankDb()), previousToken: null };
  const { listed, previousToken } = await underRaisedFence(fence, list);
  return { charges: listed, previousToken };
}

/**
 * A question to the bank under a fence: the fence's row locked and raised first, then `list` read, so that a
 * request under the same lock either committed before (and is listed) or waits for the answer and then meets the
 * raised token. Returns what was listed and the token the bank had been shown before, or null.
 */
export async function underRaisedFence<T>(
  fence: Fence,
  list: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<{ listed: T; previousToken: number | null }> {
  return getBankDb().$transaction(async (tx) => {
    await tx.$executeRaw`INSERT INTO bank_fences (lock, token) VALUES (${fence.lock}, -1) ON CONFLICT DO NOTHING`;
    const [row] = await tx.$queryRaw<Array<{ token: bigint }>>`
      SELECT token FROM bank_fences WHERE lock = ${fence.lock} FOR UPDATE`;
    const previous = row && row.token >= 0n ? Number(row.token) : null;
    await tx.$executeRaw`
      UPDATE bank_fences SET token = GREATEST(token, ${BigInt(fence.token)}), updated_at = now() WHERE lock = ${fence.lock}`;
    return { listed: await list(tx), previousToken: previous };
  });
}

/** A charge on the bank's settlement report: whose it is, and when it landed. */
export type SettledCharge = Charge & { merchantRef: string };

/** How many charges a page of the settlement report lists: a reader asks for the next page after the last one. */
export const REPORT_PAGE = 5_000;

/**
 * The settlement report, what a processor sends its merchant every day (and what reconciliation, 对账, compares
 * with the merchant's own books): every charge that landed after `landedAfter` and by `landedBy`, oldest first,
 * for these merchant references only if `merchantRefs` is given; a page of REPORT_PAGE at most, the one after
 * the charge `after` when given.
 */
export async function settlementReport(query: {
  landedAfter: Date;
  landedBy: Date;
  merchantRefs?: string[];
  after?: SettledCharge;
}): Promise<SettledCharge[]> {
  const refs = query.merchantRefs ? Prisma.sql`AND merchant_ref = ANY(${query.merchantRefs}::text[])` : Prisma.empty;
  const after = query.after
    ? Prisma.sql`AND (created_at, id) > (${query.after.createdAt}::timestamptz, ${query.after.id})`
    : Prisma.empty;
  return getBankDb().$queryRaw<SettledCharge[]>`
    SELECT id, merchant_ref AS "merchantRef", amount_cents AS "amountCents", created_at AS "createdAt" FROM bank_charges
    WHERE created_at > ${query.landedAfter} AND created_at <= ${query.landedBy} ${refs} ${after}
    ORDER BY created_at, id
    LIMIT ${REPORT_PAGE}`;
}

/** The statement of merchant reference X: every charge that has landed, oldest first. */
export async function listCharges(merchantRef: string, now: () => number = Date.now): Promise<Charge[]> {
  return (await askBank({ merchantRef }, now)).charges;
}
