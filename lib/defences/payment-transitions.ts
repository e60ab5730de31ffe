// Layer 3's transition table, pure. A payment's status moves forward only; the one step back is the
// release (PROCESSING → PENDING), which undoes a claim under which no money moved, so that the customer
// may try again. PAID and DECLINED are final. Every database update is conditional on a status this
// table allows (`WHERE status IN (...)`), so two requests can never both make the same move.
export const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'PAID', 'DECLINED', 'UNKNOWN'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export type PaymentEvent =
  /** A request claims the order before calling the bank. */
  | 'claim'
  /** The bank charged the card. */
  | 'charged'
  /** The bank refused the card: final, nothing charged. */
  | 'declined'
  /** The bank failed before charging: nothing moved, the claim is released. */
  | 'failedBeforeCharge'
  /** The bank did not answer: the outcome is unknown. */
  | 'timedOut'
  /** Reconciliation asked the bank and found the charge. */
  | 'reconciledCharged'
  /** Reconciliation asked the bank and found no charge: nothing moved, the claim is released. */
  | 'reconciledNoCharge';

const TRANSITIONS: Record<PaymentStatus, Partial<Record<PaymentEvent, PaymentStatus>>> = {
  // The reconciler may find a charge for a PENDING order: one made while layer 3 was switched off.
  PENDING: { claim: 'PROCESSING', reconciledCharged: 'PAID' },
  PROCESSING: {
    charged: 'PAID',
    declined: 'DECLINED',
    failedBeforeCharge: 'PENDING',
    timedOut: 'UNKNOWN',
    reconciledCharged: 'PAID',
    reconciledNoCharge: 'PENDING',
  },
  UNKNOWN: { charged: 'PAID', reconciledCharged: 'PAID', reconciledNoCharge: 'PENDING' },
  PAID: {},
  DECLINED: {},
};

/** The status after `event`, or undefined when the event is not allowed from `status`. */
export function nextStatus(status: PaymentStatus, event: PaymentEvent): PaymentStatus | undefined {
  return TRANSITIONS[status][event];
}

/** The statuses from which `event` may be applied: the `WHERE status IN (...)` of its update. */
export function statusesAllowing(event: PaymentEvent): PaymentStatus[] {
  return PAYMENT_STATUSES.filter((status) => TRANSITIONS[status][event] !== undefined);
}

/** The status `event` leads to (the same from every status that allows it). */
export function targetOf(event: PaymentEvent): PaymentStatus {
  const [from] = statusesAllowing(event);
  const to = from && TRANSITIONS[from][event];
  if (!to) throw new Error(`no transition for ${event}`);
  return to;
}

export function isFinal(status: PaymentStatus): boolean {
  return Object.keys(TRANSITIONS[status]).length === 0;
}
