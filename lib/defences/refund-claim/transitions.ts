// Layer 3 for refunds: a refund's transition table, pure. A refund moves forward only; the step back is the
// release (to REQUESTED) of a claim under which no money moved, so that the caller may retry, and the resumption
// of a claim taken over (UNKNOWN → PROCESSING) once the bank has said nothing can land. SUCCEEDED and FAILED are
// final. Every update is conditional on a status this table allows and on the claim's holder and fence, as an
// order's payment is (order-claim/transitions.ts).
import { stateMachine } from '../state-machine.ts';

export const REFUND_STATUSES = ['REQUESTED', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'UNKNOWN'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export type RefundEvent =
  /** An attempt claims the refund (and its amount on the order's ledger) before asking the bank. */
  | 'claim'
  /** The bank refunded. */
  | 'refunded'
  /** The bank refused the refund (more than what is left of the charge): final, nothing refunded. */
  | 'refused'
  /** The bank failed before refunding: nothing moved, the claim (and the ledger's amount) is given back. */
  | 'failedBeforeRefund'
  /** The bank did not answer: the outcome is unknown. */
  | 'timedOut'
  /** A dead claim is taken over (by the reconciler, or a duplicate) before the bank is asked: in doubt. */
  | 'takenOver'
  /** The bank has no refund and none can land: the taker, a refunding duplicate, goes on to ask for it. */
  | 'resumed'
  /** Reconciliation asked the bank and found the refund. */
  | 'reconciledRefunded'
  /** Reconciliation asked the bank and found no refund, finally: nothing moved, the claim is given back. */
  | 'reconciledNoRefund';

const TRANSITIONS: Record<RefundStatus, Partial<Record<RefundEvent, RefundStatus>>> = {
  REQUESTED: { claim: 'PROCESSING' },
  PROCESSING: {
    refunded: 'SUCCEEDED',
    refused: 'FAILED',
    failedBeforeRefund: 'REQUESTED',
    timedOut: 'UNKNOWN',
    takenOver: 'UNKNOWN',
  },
  UNKNOWN: {
    takenOver: 'UNKNOWN',
    resumed: 'PROCESSING',
    reconciledRefunded: 'SUCCEEDED',
    reconciledNoRefund: 'REQUESTED',
  },
  SUCCEEDED: {},
  FAILED: {},
};

export const REFUND = stateMachine(REFUND_STATUSES, TRANSITIONS);
