import 'server-only';
// A refund's call to the bank, once, with the bank's key (layer 5, when it is on) and the innermost claim's
// fencing token; its answer read as the verdict every claim hears, as a payment's is (lib/payments/bank-call.ts):
//   settled       refunded (or the bank returned its first refund for the key), or refused (more than is left)
//   nothingMoved  the bank could not be reached, or refused a stale fencing token: nothing was refunded
//   unknown       a timeout, a key still in use: the bank is asked at once, under this attempt's own fence; a
//                 refund it has is the outcome, and none (yet) keeps every claim in doubt.
import type { Lease, ToBank, Verdict } from '../defences/defence.ts';
import { outcomeFromRefund, type RefundAnswer, type RefundAttempt, type RefundOutcome } from '../defences/refund.ts';
import {
  type BankFaults,
  BankFencedError,
  BankKeyInUseError,
  BankTimeoutError,
  BankUnavailableError,
} from '../payments/bank.ts';
import { askBankRefunds, BankRefundRefusedError, refundCharge } from '../payments/bank-refunds.ts';
import { decide, reason } from '../telemetry/spans.ts';

export type RefundCall = { lease?: Lease; toBank?: ToBank; faults: BankFaults };
type Called = { verdict: Verdict<RefundOutcome>; answer: RefundAnswer };

/** Calls the bank once. Never throws on the bank's behalf: every fault becomes a verdict. */
export async function callBankForRefund(attempt: RefundAttempt, call: RefundCall): Promise<Called> {
  const { orderNo, chargeId, reference, amountCents, span, now } = attempt;
  const { lease, toBank, faults } = call;
  try {
    const request = {
      chargeId,
      merchantRef: reference,
      amountCents,
      idempotencyKey: toBank?.idempotencyKey,
      fence: lease?.fence,
    };
    const refunded = await refundCharge(request, faults, now);
    const outcome = outcomeFromRefund(orderNo, refunded);
    if (refunded.replayed && toBank) {
      decide(span, toBank.keyedBy, 'stopped', () => reason('bankRefundReplayed', { refund: refunded.id }));
      return {
        verdict: { kind: 'settled', outcome, existing: true },
        answer: { kind: 'duplicate', outcome, answeredBy: toBank.keyedBy, existing: true },
      };
    }
    decide(
      span,
      'bank',
      'refunded',
      reason('bankRefunded', { refund: refunded.id, fence: lease?.fence.token ?? 'none' }),
    );
    return { verdict: { kind: 'settled', outcome, existing: false }, answer: { kind: 'completed', outcome } };
  } catch (error) {
    return fault(attempt, call, error);
  }
}

async function fault(attempt: RefundAttempt, call: RefundCall, error: unknown): Promise<Called> {
  const { orderNo, amountCents, span } = attempt;
  if (error instanceof BankRefundRefusedError) {
    decide(span, 'bank', 'refused', () => reason('bankRefundRefused', { why: error.reason, left: error.leftCents }));
    const outcome = { status: 'FAILED' as const, orderNo, amountCents, reason: error.reason };
    return { verdict: { kind: 'settled', outcome, existing: false }, answer: { kind: 'completed', outcome } };
  }
  if (error instanceof BankUnavailableError) {
    decide(span, 'bank', 'failed', () => reason('bankRefundFailed'));
    const answer = {
      kind: 'failed_retryable',
      reason: 'The bank could not be reached. Nothing was refunded.',
    } as const;
    return { verdict: { kind: 'nothingMoved' }, answer };
  }
  if (error instanceof BankFencedError && call.lease) {
    decide(span, 'bank', 'fenced', () => reason('bankRefundFenced', { fence: error.fence.token }));
    return { verdict: { kind: 'nothingMoved' }, answer: { kind: 'in_progress', answeredBy: call.lease.layer } };
  }
  return confirm(attempt, call, error);
}

/** The refund may have been made: ask the bank at once, under this attempt's own fence. */
async function confirm(attempt: RefundAttempt, call: RefundCall, error: unknown): Promise<Called> {
  const { orderNo, reference, span, now, at } = attempt;
  const { lease, toBank } = call;
  const keyInUse = error instanceof BankKeyInUseError && toBank;
  const why =
    error instanceof BankTimeoutError ? reason('bankTimeout', { ms: error.afterMs }) : reason('bankCallFailed');
  decide(span, keyInUse ? toBank.keyedBy : 'bank', 'unknown', why);
  if (at) await at('pay.confirm');
  const [found] =
    error instanceof BankTimeoutError && lease
      ? await askBankRefunds({ merchantRef: reference, fence: lease.fence, byLock: lease.byLock }, now).then(
          (answer) => answer.refunds,
          () => [],
        )
      : [];
  if (!found) {
    decide(span, 'bank', 'unknown', () => reason('bankNoRefundYet'));
    return { verdict: { kind: 'unknown', since: now() }, answer: { kind: 'in_progress', answeredBy: 'bank' } };
  }
  decide(span, 'bank', 'confirmed', () => reason('bankRefundConfirmed', { refund: found.id }));
  const outcome = outcomeFromRefund(orderNo, found);
  return { verdict: { kind: 'settled', outcome, existing: false }, answer: { kind: 'completed', outcome } };
}
