import 'server-only';
// Steps 5 + 6 of the pipeline: the bank, called once, with the bank's key (layer 5, when a defence sent one)
// and the innermost claim's fencing token; its answer read as the verdict every claim hears. Which failures
// release the claims is the article's third detail:
//   settled       charged (or the bank returned its first charge for the key), or declined
//   nothingMoved  the bank could not be reached, or refused a stale fencing token: nothing was charged
//   unknown       a timeout, a key still in use, any fault we cannot read: the card may have been charged.
//                 The bank is asked at once, under this attempt's own fence; a charge it has is the outcome
//                 (docs/decisions/014-answers-in-doubt.md). No charge (yet): every claim is kept.
import type { Answer, Attempt, Lease, ToBank, Verdict } from '../defences/defence.ts';
import { outcomeFromCharge } from '../defences/outcome.ts';
import { decide, type Reason, reason } from '../telemetry/spans.ts';
import {
  askBank,
  BankDeclinedError,
  type BankFaults,
  BankFencedError,
  BankKeyInUseError,
  BankTimeoutError,
  BankUnavailableError,
  chargeCard,
} from './bank.ts';

export type BankCall = {
  /** The innermost claim's lease (its fencing token), if any claim is held. */
  lease?: Lease;
  /** The bank's key, from the defence that sends one. */
  toBank?: ToBank;
  faults: BankFaults;
};

/** Calls the bank once. Never throws on the bank's behalf: every fault becomes a verdict. */
export async function callBank(attempt: Attempt, call: BankCall): Promise<{ verdict: Verdict; answer: Answer }> {
  const { orderNo, amountCents, span, now } = attempt;
  const { lease, toBank, faults } = call;
  try {
    const request = { merchantRef: orderNo, amountCents, idempotencyKey: toBank?.idempotencyKey, fence: lease?.fence };
    const charge = await chargeCard(request, faults, now);
    const outcome = outcomeFromCharge(orderNo, charge);
    if (charge.replayed && toBank) {
      decide(span, toBank.keyedBy, 'stopped', () => reason('bankReplayed', { charge: charge.id }));
      return {
        verdict: { kind: 'settled', outcome, existing: true },
        answer: { kind: 'duplicate', outcome, answeredBy: toBank.keyedBy, existing: true },
      };
    }
    decide(span, 'bank', 'charged', () =>
      reason('bankCharged', { charge: charge.id, fence: lease?.fence.token ?? 'none' }),
    );
    return { verdict: { kind: 'settled', outcome, existing: false }, answer: { kind: 'completed', outcome } };
  } catch (error) {
    if (error instanceof BankDeclinedError) {
      decide(span, 'bank', 'declined', () => declineReason(error.reason));
      const outcome = { status: 'DECLINED' as const, orderNo, amountCents, reason: error.reason };
      return { verdict: { kind: 'settled', outcome, existing: false }, answer: { kind: 'completed', outcome } };
    }
    if (error instanceof BankUnavailableError) {
      // Failed before any money moved: release everything, so the customer may simply try again.
      decide(span, 'bank', 'failed', () => reason('bankFailed'));
      const answer = {
        kind: 'failed_retryable',
        reason: 'The bank could not be reached. Nothing was charged.',
      } as const;
      return { verdict: { kind: 'nothingMoved' }, answer };
    }
    if (error instanceof BankFencedError && lease) {
      // The bank refused a stale token: another attempt holds the claim now. Nothing moved by this one.
      decide(span, 'bank', 'fenced', () => reason('bankFenced', { fence: error.fence.token }));
      return { verdict: { kind: 'nothingMoved' }, answer: { kind: 'in_progress', answeredBy: lease.layer } };
    }
    return confirm(attempt, call, error);
  }
}

/** The card may have been charged: ask the bank at once, under this attempt's own fence. */
async function confirm(
  attempt: Attempt,
  call: BankCall,
  error: unknown,
): Promise<{ verdict: Verdict; answer: Answer }> {
  const { orderNo, span, now, at } = attempt;
  const { lease, toBank } = call;
  decide(span, error instanceof BankKeyInUseError && toBank ? toBank.keyedBy : 'bank', 'unknown', () =>
    unknownReason(error),
  );
  if (at) await at('pay.confirm');
  const confirmed =
    error instanceof BankTimeoutError && lease
      ? await askBank({ merchantRef: orderNo, fence: lease.fence, byLock: lease.byLock }, now).then(
          (answer) => answer.charges[0],
          () => undefined,
        )
      : undefined;
  if (!confirmed) {
    decide(span, 'bank', 'unknown', () => reason('bankNoChargeYet'));
    return { verdict: { kind: 'unknown', since: now() }, answer: { kind: 'in_progress', answeredBy: 'bank' } };
  }
  decide(span, 'bank', 'confirmed', () => reason('bankConfirmed', { charge: confirmed.id }));
  const outcome = outcomeFromCharge(orderNo, confirmed);
  return { verdict: { kind: 'settled', outcome, existing: false }, answer: { kind: 'completed', outcome } };
}

/** The bank's word for a declined card, as a reason (the simulated bank has one). */
function declineReason(why: string): Reason {
  return why === 'insufficient funds' ? reason('bankDeclinedFunds') : reason('bankDeclined', { reason: why });
}

/** Why the bank's answer is unknown: its error's message, in words the lab can translate. */
function unknownReason(error: unknown): Reason {
  if (error instanceof BankTimeoutError) {
    return error.afterMs > 0 ? reason('bankTimeout', { ms: error.afterMs }) : reason('bankAnswerLost');
  }
  if (error instanceof BankKeyInUseError) return reason('bankKeyInUse', { key: error.idempotencyKey });
  return error instanceof Error ? reason('bankError', { message: error.message }) : reason('bankCallFailed');
}
