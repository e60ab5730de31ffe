// Layer 3's transition table, pure. A payment's status moves forward only; the steps back are releases
// (to PENDING), which undo a claim under which no money moved, so that the customer may try again, and the
// resumption of a claim taken over (UNKNOWN → PROCESSING) once the bank has said nothing can land. PAID
// and DECLINED are final. Every database update is conditional on a status this table allows
// (`WHERE status IN (...)`) and on the claim's holder and fence, so two requests can never both make a move.
import { stateMachine } from '../state-machine.ts';

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
  /** A dead claim is taken over (by the reconciler, or a duplicate) before the bank is asked: in doubt. */
  | 'takenOver'
  /** The bank has no charge and none can land: the taker, a paying duplicate, goes on to pay. */
  | 'resumed'
  /** Reconciliation asked the bank and found the charge. */
  | 'reconciledCharged'
  /** Reconciliation asked the bank and found no charge, finally: nothing moved, the claim is released. */
  | 'reconciledNoCharge';

const TRANSITIONS: Record<PaymentStatus, Partial<Record<PaymentEvent, PaymentStatus>>> = {
  // The reconciler may find a charge for a PENDING order: one made while layer 3 was switched off.
  PENDING: { claim: 'PROCESSING', reconciledCharged: 'PAID' },
  PROCESSING: {
    charged: 'PAID',
    declined: 'DECLINED',
    failedBeforeCharge: 'PENDING',
    timedOut: 'UNKNOWN',
    takenOver: 'UNKNOWN',
  },
  // Only a claim taken over (held by the reconciler or a duplicate) leaves UNKNOWN, and only by the bank's
  // answer: a charge found, no charge that can still land, or (a paying duplicate) on to the bank again.
  UNKNOWN: { takenOver: 'UNKNOWN', resumed: 'PROCESSING', reconciledCharged: 'PAID', reconciledNoCharge: 'PENDING' },
  PAID: {},
  // The bank's books win: a charge on its settlement report for an order recorded DECLINED means it was paid.
  // Only where layer 3 was off (one attempt was declined, another one charged); with layer 3 on a declined
  // order is never claimed again, so no charge can follow.
  DECLINED: { reconciledCharged: 'PAID' },
};

const PAYMENT = stateMachine(PAYMENT_STATUSES, TRANSITIONS);

export const { nextStatus, statusesAllowing, targetOf } = PAYMENT;

/** No payment attempt moves it any more (only the bank's books may still: a charge found for a declined order). */
export function isFinal(status: PaymentStatus): boolean {
  return PAYMENT.isFinal(status, ['reconciledCharged']);
}
