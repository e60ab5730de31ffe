// The article's third detail, in one place: when a claim is given back. Pure. Every guard that holds a claim
// (layer 2's key, layers 3-4's order) asks it what to do with its claim once the rest of the payment has come
// back, under the lab's release rule (layers.ts):
//
//                                   noMoneyMoved (right)   anyError        never
//   the bank's outcome, or the
//   first outcome (a duplicate)     complete               complete        complete
//   the charge went through, then
//   a later step threw (a notify)   complete               release (!)     leave
//   nothing moved (the bank was
//   unreachable, a later layer
//   stopped the attempt, an outer
//   claim was lost while away)      release                release         leave (!)
//   the outcome is unknown          keep in doubt          release (!)     leave
//
// (!): the bug each wrong rule is. `anyError` gives the claim back when money may have moved, so the retry
// charges again (Powertools' idempotency deletes its record on any exception); `never` keeps the customer
// out until the claim's lease runs out (SET NX, and nothing on the way out). A claim left as it is expires
// like a dead attempt's: after its lease a retry takes it over, or the reconciler asks the bank.
import type { Ending } from './defence.ts';
import type { ReleaseRule } from './layers.ts';
import type { PaymentOutcome } from './outcome.ts';

/** Any answer, as far as the release rule reads it: a duplicate's carries the first outcome. */
type AnyAnswer<O> = { kind: string } | { kind: 'duplicate'; outcome: O; existing: boolean };

/** What a guard does with its claim (of a payment, or of a refund: its outcome type `O`). */
export type ClaimFate<O = PaymentOutcome> =
  /** The outcome is known: kept on the claim, and given to every retry. */
  | { kind: 'complete'; outcome: O; existing: boolean; afterFailure: boolean }
  /** Given back: a retry may claim it at once. `onError`: only the rule `anyError` gives it back here. */
  | { kind: 'release'; onError: boolean }
  /** The card may have been charged: kept in doubt (since `since`), until the bank is asked. */
  | { kind: 'keepUnknown'; since?: number }
  /** Left as it is (the rule `never`): nobody may claim it until its lease runs out. */
  | { kind: 'leave' };

/**
 * What becomes of a claim under `rule` once the rest of the payment ended with `end`. `tookOver`: the claim was
 * taken over from an earlier attempt of the same intent, whose charge may still be in doubt: stopped before the
 * bank, it goes back to "unknown", never away (the right rule).
 */
export function claimFate<O>(rule: ReleaseRule, end: Ending<AnyAnswer<O>, O>, tookOver = false): ClaimFate<O> {
  if (end.kind === 'stopped') {
    const { answer } = end;
    if ('outcome' in answer && answer.kind === 'duplicate' && end.failure === undefined) {
      return { kind: 'complete', outcome: answer.outcome, existing: answer.existing, afterFailure: false };
    }
    // Nothing moved: this attempt never reached the bank.
    if (rule === 'never') return { kind: 'leave' };
    if (rule === 'anyError') return { kind: 'release', onError: tookOver };
    return tookOver ? { kind: 'keepUnknown' } : { kind: 'release', onError: false };
  }
  const { verdict } = end;
  const failed = end.failure !== undefined || verdict.kind !== 'settled';
  if (failed && rule === 'never') return { kind: 'leave' };
  if (failed && rule === 'anyError') return { kind: 'release', onError: verdict.kind !== 'nothingMoved' };
  switch (verdict.kind) {
    case 'settled':
      return { kind: 'complete', outcome: verdict.outcome, existing: verdict.existing, afterFailure: failed };
    case 'nothingMoved':
      return { kind: 'release', onError: false };
    case 'unknown':
      return { kind: 'keepUnknown', since: verdict.since };
  }
}
