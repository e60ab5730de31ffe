// Layer 5: the bank's own idempotency key, what Stripe offers its callers. The merchant sends the bank a key
// derived from the business identity of the intent, the order, never from the attempt: every retry and every
// reconciliation of the payment re-sends the same key, and the bank returns its first charge for it instead
// of charging again. It is the one layer that closes the window after the merchant lost track of a charge (a
// timeout, a charge that lands late, a stalled attempt whose claim was taken over).
// The simulated bank keeps a key only with a charge: a request it refused or failed before charging leaves
// the key unused, so the same key is sent again when the payment is retried (no counter is needed).
// Catches: every duplicate that reaches the bank, whatever the merchant lost. Costs: a unique key at the bank.
//
// What a duplicate stopped here gets: the bank's first charge for the key, answered as a payment made before
// (HTTP 200, answered by the bank key); a key still in use at the bank (its first charge has not landed) is
// an unknown outcome, "in progress". Its claim: none of the merchant's; the bank keeps the key with its charge.
import { decide, reason } from '../../telemetry/spans.ts';
import type { Defence } from '../defence.ts';

/** The key the merchant sends the bank for paying `orderNo`. */
export function bankKeyFor(orderNo: string): string {
  return `pay:${orderNo}`;
}

/** The key the merchant sends the bank for a refund: its reference (`<order no>/<refund key>`), never the order's. */
export function refundBankKeyFor(reference: string): string {
  return `refund:${reference}`;
}

/** Layer 5 as a defence: nothing to claim; the key goes with the charge (lib/payments/bank-call.ts reads the bank's replay). */
export const bankKeyDefence: Defence = {
  layer: 'bankKey',
  async guard({ orderNo, span }, next) {
    const key = bankKeyFor(orderNo);
    decide(span, 'bankKey', 'sent', () => reason('bankKeySent', { key }));
    return next({ toBank: { idempotencyKey: key, keyedBy: 'bankKey' } });
  },
};
