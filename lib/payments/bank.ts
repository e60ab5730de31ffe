import 'server-only';
// The simulated card network ("the bank"). It charges every call it receives, exactly like a processor
// that does not deduplicate, and records each charge in its own ledger (bank_charges: the customer's
// card statement). Its faults are those of a real network, which does not die with the merchant: the
// charge is recorded first and the latency falls after it, so a merchant killed during a slow payment
// leaves a charge it never heard of. Only lib/payments talks to it.
import { randomBytes } from 'node:crypto';
import { getDb } from '../db.ts';
import type { Faults } from '../lab/settings.ts';

export { BANK_SETTLEMENT_WINDOW_MS } from '../lab/settings.ts';

export type Charge = { id: string; amountCents: number; createdAt: Date };

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
    super(`the bank did not answer within ${afterMs} ms; the outcome is unknown`);
    this.name = 'BankTimeoutError';
  }
}

/** How long the merchant waits for the bank before treating the outcome as unknown. */
export const BANK_TIMEOUT_MS = 10_000;

export type BankFaults = Pick<Faults, 'bankLatencyMs' | 'bankFailure' | 'bankTimeoutAfterCharge' | 'bankLateChargeMs'>;

/** Charges the card. Every call that gets past the failure point is a new charge on the statement. */
export async function chargeCard(
  request: { merchantRef: string; amountCents: number },
  faults: BankFaults,
  now: () => number = Date.now,
): Promise<Charge> {
  // Fault point 1: fail before charging.
  if (faults.bankFailure === 'decline') throw new BankDeclinedError('insufficient funds');
  if (faults.bankFailure === 'error') throw new BankUnavailableError();

  // The charge lands on the statement at `created_at`: now, or later for a late charge (fault point 4).
  const id = `ch_${randomBytes(12).toString('hex')}`;
  const landsAt = new Date(now() + faults.bankLateChargeMs);
  const [charge] = await getDb().$queryRaw<Charge[]>`
    INSERT INTO bank_charges (id, merchant_ref, amount_cents, created_at)
    VALUES (${id}, ${request.merchantRef}, ${request.amountCents}, ${landsAt})
    RETURNING id, amount_cents AS "amountCents", created_at AS "createdAt"`;
  if (!charge) throw new Error('the bank recorded no charge');

  // Fault point 2: the answer is slow (the charge is already on the statement).
  const latency = Math.min(faults.bankLatencyMs, BANK_TIMEOUT_MS);
  if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
  // Fault point 3: the answer never arrives. Fault point 4: the merchant gives up before the bank has
  // charged; the charge lands later anyway.
  if (faults.bankTimeoutAfterCharge || faults.bankLateChargeMs > 0 || faults.bankLatencyMs > BANK_TIMEOUT_MS) {
    throw new BankTimeoutError(faults.bankLatencyMs > BANK_TIMEOUT_MS ? BANK_TIMEOUT_MS : latency);
  }
  return charge;
}

/**
 * "Did you charge merchant reference X?": every charge on the statement for it so far, oldest first. A
 * charge that has not landed yet is not listed: "no charge yet" is not "never charged".
 */
export async function listCharges(merchantRef: string, now: () => number = Date.now): Promise<Charge[]> {
  return getDb().bankCharge.findMany({
    where: { merchantRef, createdAt: { lte: new Date(now()) } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { id: true, amountCents: true, createdAt: true },
  });
}
