import 'server-only';
// The simulated card network ("the bank"). It charges every call it receives, exactly like a processor
// that does not deduplicate, and records each charge in its own ledger (bank_charges: the customer's
// card statement). Its faults are those of a real network, which does not die with the merchant: the
// charge is recorded first and the latency falls after it, so a merchant killed during a slow payment
// leaves a charge it never heard of. Only lib/payments talks to it.
import { randomBytes } from 'node:crypto';
import { getDb } from '../db.ts';
import type { Faults } from '../lab/settings.ts';

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

export type BankFaults = Pick<Faults, 'bankLatencyMs' | 'bankFailure' | 'bankTimeoutAfterCharge'>;

/** Charges the card. Every call that gets past the failure point is a new charge on the statement. */
export async function chargeCard(
  request: { merchantRef: string; amountCents: number },
  faults: BankFaults,
): Promise<Charge> {
  // Fault point 1: fail before charging.
  if (faults.bankFailure === 'decline') throw new BankDeclinedError('insufficient funds');
  if (faults.bankFailure === 'error') throw new BankUnavailableError();

  const id = `ch_${randomBytes(12).toString('hex')}`;
  const [charge] = await getDb().$queryRaw<Charge[]>`
    INSERT INTO bank_charges (id, merchant_ref, amount_cents) VALUES (${id}, ${request.merchantRef}, ${request.amountCents})
    RETURNING id, amount_cents AS "amountCents", created_at AS "createdAt"`;
  if (!charge) throw new Error('the bank recorded no charge');

  // Fault point 2: the answer is slow (the charge is already on the statement).
  const latency = Math.min(faults.bankLatencyMs, BANK_TIMEOUT_MS);
  if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
  // Fault point 3: the answer never arrives.
  if (faults.bankTimeoutAfterCharge || faults.bankLatencyMs > BANK_TIMEOUT_MS) {
    throw new BankTimeoutError(faults.bankTimeoutAfterCharge ? latency : BANK_TIMEOUT_MS);
  }
  return charge;
}

/** "Did you charge merchant reference X?": every charge the bank recorded for it, oldest first. */
export async function listCharges(merchantRef: string): Promise<Charge[]> {
  return getDb().bankCharge.findMany({
    where: { merchantRef },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { id: true, amountCents: true, createdAt: true },
  });
}
