import 'server-only';
// Layers 3 and 4 for refunds, one claim on the refund, which also puts its amount on the order's ledger. Layer 3,
// the refund's state machine: `UPDATE refunds SET status = 'PROCESSING' … WHERE status = 'REQUESTED'` (one row:
// this attempt won). Layer 4: a dedup row (REFUND, `<order no>/<refund key>`) the unique key refuses to hold
// twice. The ledger: `orders.refunded_cents`, raised in the same statement, which the database's CHECK refuses to
// let pass the order's amount: a refund that would is refused before the bank, saying how much is left. With both
// layers off nothing claims the refund, but each attempt's amount still goes on the ledger (unguardedRefund).
// Catches: every duplicate of the same refund (the same identity), whatever its source. Misses: what the identity
// gets wrong: a refund keyed by the order number (the second legitimate refund is "the same"), or by its
// parameters (two legitimate refunds of one amount are "the same"; a retry stamped anew is "another").
//
// What a duplicate stopped here gets, as for a payment's claim (order-claim/defence.ts): the first outcome, a dead
// claim taken over, "in progress"; and a refund the ledger refuses is told how much is left.
// When the claim is given back: completed with the bank's answer (SUCCEEDED keeps the amount on the ledger, FAILED
// takes it off), released when nothing moved (the amount off), kept in doubt when the bank's answer is unknown (the
// amount stays: the refund may have been made).
import { decide, reason } from '../../telemetry/spans.ts';
import { type Defence, type Ending, type Lease, lostBy, stopped } from '../defence.ts';
import type { Layer } from '../layers.ts';
import {
  outcomeFromRefund,
  type RefundAnswer,
  type RefundAttempt,
  type RefundHold,
  type RefundOutcome,
} from '../refund.ts';
import { type ClaimFate, claimFate } from '../release.ts';
import {
  claimRefund,
  type DatabaseLayers,
  keepRefundClaimUnknown,
  leftToRefund,
  recordRefundOutcome,
  refundLock,
  releaseRefundClaim,
  renewRefundClaim,
  reserveUnguarded,
  unreserveUnguarded,
} from './store.ts';

type RefundDefence = Defence<RefundAttempt, RefundAnswer, RefundOutcome>;
type Switches = DatabaseLayers & { bankKey: boolean };
type RefundClaim = { kind: 'held'; hold: RefundHold; tookOver: boolean } | { kind: 'stopped'; answer: RefundAnswer };

const layerOf = (layers: DatabaseLayers): Layer => (layers.stateMachine ? 'stateMachine' : 'uniqueConstraint');

/** Layers 3 and/or 4 for a refund, as one defence: the refund claimed (and its amount on the ledger) by one statement. */
export function refundClaimDefence(layers: Switches): RefundDefence {
  return {
    layer: layerOf(layers),
    async guard(attempt, next) {
      const claim = await claimTheRefund(attempt, layers);
      if (claim.kind === 'stopped') return stopped(claim.answer);
      const { hold, tookOver } = claim;
      const end = await next({ lease: leaseOf(attempt, hold, layers, tookOver) });
      // As for a payment's claim: this one lost before the bank is another's now; layer 2's key lost, this one is
      // still held and nothing moved, so the release rule gives it back (its amount off the ledger) or keeps it.
      if (end.kind === 'stopped' && lostBy(end.answer, layerOf(layers))) return end;
      await settle(attempt, hold, layers, claimFate(attempt.release, end, tookOver));
      return end;
    },
  };
}

async function claimTheRefund(attempt: RefundAttempt, layers: Switches): Promise<RefundClaim> {
  const { span, orderNo, refundKey, attemptId } = attempt;
  const layer = layerOf(layers);
  for (let tries = 0; ; tries++) {
    if (attempt.at) await attempt.at('order.claim');
    const claimed = await claimRefund(layers, { orderNo, refundKey }, attemptId, new Date(attempt.now()));
    if ('fence' in claimed) {
      const { fence } = claimed;
      if (layers.stateMachine) decide(span, 'stateMachine', 'claimed', () => reason('refundClaimed', { fence }));
      if (layers.uniqueConstraint)
        decide(
          span,
          'uniqueConstraint',
          'inserted',
          reason('refundDedupInserted', { reference: attempt.reference, fence }),
        );
      return { kind: 'held', hold: { orderNo, refundKey, attemptId, fence }, tookOver: false };
    }
    if ('gone' in claimed) return { kind: 'stopped', answer: { kind: 'order_not_found' } };
    if ('exceeds' in claimed) {
      const leftCents = await leftToRefund(orderNo);
      decide(span, layer, 'stopped', () => reason('refundExceeds', { cents: attempt.amountCents, left: leftCents }));
      return { kind: 'stopped', answer: { kind: 'exceeds', leftCents } };
    }
    const answer = await answerDuplicate(attempt, claimed.refusedBy, layers);
    if (answer !== 'again') return answer;
    if (tries > 0) return stillProcessing(attempt, claimed.refusedBy);
  }
}

/** A duplicate of the refund: the first outcome, a dead claim taken over by this attempt, or "in progress". */
async function answerDuplicate(attempt: RefundAttempt, said: Layer, layers: Switches): Promise<RefundClaim | 'again'> {
  const { span } = attempt;
  const answer = await attempt.recovery.reconcile({ attemptId: attempt.attemptId, bankKey: layers.bankKey });
  switch (answer.kind) {
    case 'settled': {
      const found = answer.found ? 'yes' : 'no';
      decide(span, said, 'stopped', () =>
        reason('refundSettled', { layer: said, found, status: answer.outcome.status }),
      );
      const answeredBy = answer.found ? 'reconciler' : said;
      return {
        kind: 'stopped',
        answer: { kind: 'duplicate', outcome: answer.outcome, answeredBy, existing: !answer.found },
      };
    }
    case 'resumed':
      decide(span, said, 'takeover', () => reason('refundTakeover', { layer: said, fence: answer.hold.fence }));
      return { kind: 'held', hold: answer.hold, tookOver: true };
    case 'waiting':
      decide(span, said, 'stopped', () => reason('refundConfirming', { layer: said }));
      return { kind: 'stopped', answer: { kind: 'in_progress', answeredBy: 'reconciler' } };
    case 'gone':
      return { kind: 'stopped', answer: { kind: 'order_not_found' } };
    case 'idle':
    case 'released':
      return 'again';
    case 'running':
      return stillProcessing(attempt, said);
  }
}

function stillProcessing(attempt: RefundAttempt, said: Layer): RefundClaim {
  decide(attempt.span, said, 'stopped', () => reason('refundStillProcessing', { layer: said }));
  return { kind: 'stopped', answer: { kind: 'in_progress', answeredBy: said } };
}

/** The refund's claim as the bank checks it, and its renewal after a pause. */
function leaseOf(attempt: RefundAttempt, hold: RefundHold, layers: DatabaseLayers, tookOver: boolean): Lease {
  const layer = layerOf(layers);
  return {
    fence: { lock: refundLock(hold), token: hold.fence },
    byLock: false,
    layer,
    tookOver,
    async renew(now) {
      if (attempt.at) await attempt.at('order.renew');
      if (await renewRefundClaim(hold, layers, new Date(now))) return undefined;
      decide(attempt.span, layer, 'lost', () => reason('claimLost'));
      return { kind: 'in_progress', answeredBy: layer, takenOver: true };
    },
  };
}

/** The bank's verdict, written on the refund this attempt holds. Never throws: money may have moved. */
async function settle(
  attempt: RefundAttempt,
  hold: RefundHold,
  layers: DatabaseLayers,
  fate: ClaimFate<RefundOutcome>,
): Promise<void> {
  const { span, reference } = attempt;
  const layer = layerOf(layers);
  switch (fate.kind) {
    case 'complete':
      if (attempt.at) await attempt.at('order.record');
      await recordRefundOutcome(hold, fate.outcome, hold, layers).then(
        (recorded) => {
          if (!recorded) decide(span, 'outcome', 'late', () => reason('outcomeLate'));
        },
        (error: Error) =>
          console.error(`[refund] ${reference}: outcome not recorded (${error.message}); reconciliation will`),
      );
      return;
    case 'release':
      if (attempt.at) await attempt.at('order.release');
      await releaseRefundClaim(hold).then(
        () => decide(span, layer, 'released', () => reason(fate.onError ? 'refundReleasedOnError' : 'refundReleased')),
        (error: Error) => console.error(`[refund] ${reference}: claim not released (${error.message})`),
      );
      return;
    case 'keepUnknown':
      if (attempt.at) await attempt.at('order.keepUnknown');
      await keepRefundClaimUnknown(hold, new Date(fate.since ?? attempt.now())).catch(() => {});
      return;
    case 'leave':
      decide(span, layer, 'left', () => reason('refundLeft', { leaseMs: attempt.leaseMs }));
      return;
  }
}

/**
 * Layers 3 and 4 both off: nothing claims the refund. The ledger still counts what each attempt asks the bank for
 * (refused past the charge), and the refund's row is written when the bank answers, unguarded: the last attempt to
 * finish writes its outcome over the first's (the statement shows how many refunds there were). `bankKeyOf`: layer
 * 5 is on, and this is its key for a refund: a retry the ledger would refuse is first asked for at the bank, which
 * returns the refund it made under the key (the retry's answer) rather than have the ledger call it "too much".
 */
export function unguardedRefund(options: { bankKeyOf?: (reference: string) => string }): RefundDefence {
  return {
    name: 'refund',
    async guard(attempt, next) {
      const { orderNo, amountCents } = attempt;
      const reserved = await reserveUnguarded(attempt, amountCents);
      if (reserved === 'gone') return stopped({ kind: 'order_not_found' });
      if (reserved === 'exceeds') return refusedByTheLedger(attempt, options.bankKeyOf);
      const end = await next();
      const { verdict } = end.kind === 'banked' ? end : { verdict: undefined };
      if (verdict?.kind === 'settled') {
        if (attempt.at) await attempt.at('order.record');
        await recordRefundOutcome(attempt, verdict.outcome, undefined, NO_LAYERS).catch((error: Error) =>
          console.error(`[refund] ${attempt.reference}: outcome not recorded (${error.message})`),
        );
      }
      // This attempt moved no money: stopped before the bank, nothing moved there, the bank refused it, or the bank
      // returned its first refund for the key (layer 5's replay). Its amount comes off. An unknown outcome keeps it:
      // the refund may have been made, and the bank's books will record it without counting it again.
      const moved = verdict?.kind === 'unknown' || (verdict?.kind === 'settled' && isNewRefund(verdict));
      if (!moved) await unreserveUnguarded(orderNo, amountCents).catch(() => {});
      return end;
    },
  };
}

/** The ledger refused an attempt of no claim: "only this much is left", unless the bank's key says it was made. */
async function refusedByTheLedger(
  attempt: RefundAttempt,
  bankKeyOf: ((reference: string) => string) | undefined,
): Promise<Ending<RefundAnswer, RefundOutcome>> {
  const { orderNo, amountCents, span } = attempt;
  const made = bankKeyOf ? await attempt.recovery.refundOfBankKey(bankKeyOf(attempt.reference)) : undefined;
  if (made) {
    decide(span, 'bankKey', 'stopped', () => reason('bankRefundReplayed', { refund: made.id }));
    const outcome = outcomeFromRefund(orderNo, made);
    return stopped({ kind: 'duplicate', outcome, answeredBy: 'bankKey', existing: true });
  }
  const leftCents = await leftToRefund(orderNo);
  decide(span, 'request', 'stopped', () => reason('refundExceeds', { cents: amountCents, left: leftCents }));
  return stopped({ kind: 'exceeds', leftCents });
}

const NO_LAYERS: DatabaseLayers = { stateMachine: false, uniqueConstraint: false };

/** The bank made this refund for this attempt: not a refusal, not its first refund for the key returned again. */
function isNewRefund(verdict: { outcome: RefundOutcome; existing: boolean }): boolean {
  return verdict.outcome.status === 'SUCCEEDED' && !verdict.existing;
}
