// Layer 5: the bank's own idempotency key, what Stripe offers its callers. The merchant sends the bank a key
// derived from the business identity of the intent, the order, never from the attempt: every retry and every
// reconciliation of the payment re-sends the same key, and the bank returns its first charge for it instead
// of charging again. It is the one layer that closes the window after the merchant lost track of a charge (a
// timeout, a charge that lands late, a stalled attempt whose claim was taken over).
// The simulated bank keeps a key only with a charge: a request it refused or failed before charging leaves
// the key unused, so the same key is sent again when the payment is retried (no counter is needed).
// Catches: every duplicate that reaches the bank, whatever the merchant lost. Costs: a unique key at the bank.

/** The key the merchant sends the bank for paying `orderNo`. */
export function bankKeyFor(orderNo: string): string {
  return `pay:${orderNo}`;
}
