import 'server-only';
// Layers 3 and 4, one claim on the order. Layer 3, the payment state machine: the order is claimed before the
// bank by a conditional update (`UPDATE orders SET status = 'PROCESSING' WHERE order_no = ? AND status =
// 'PENDING'`): one row changed means this request won; zero means another already did. Layer 4, the unique
// constraint: a dedup row (PAYMENT, order number) that the database's unique key refuses to hold twice
// (P2002), whatever got through the layers above, the last millimetre. With both on, one statement takes both
// (one round trip). Each claim raises the order's generation, its fencing token; every later move is
// conditional on this attempt's id and that token. The statements are this folder's store.ts, the states'
// moves its transitions.ts (pure); this module is the rules.
// Catches: every duplicate of every source for the same order. Misses: nothing for an order; layer 3 needs a
// business object with clear states, layer 4 costs a write per payment.
//
// What a duplicate stopped here gets (the statement changed no row, or the unique key refused it): the
// reconciler is asked about the order (lib/payments/reconcile.ts, passed in as `recovery`):
//   - a final outcome (recorded, or found now with the bank under a dead claim): the first outcome;
//   - a dead claim, and nothing can be charged twice (the bank never saw it, the window passed, or the bank's
//     key will return what lands): no stop, this attempt takes the claim over and pays;
//   - a charge in doubt that may still land: "in progress", answered by the reconciler;
//   - a live claim: "in progress" (once more first if the claim vanished between the statement and the read).
//   - an attempt checked at its claim (the order not read before it: an API call with the lab off) whose
//     order is not this caller's to pay, or costs another amount: "no such order", or the amount mismatch.
// When the claim is given back (under the right release rule, noMoneyMoved; release.ts has the wrong ones):
// completed with the outcome once the bank has answered (PAID or DECLINED, the outcome on the dedup row, the
// outbox event for the receipt), a failure after the charge too; released when the bank refused before
// charging (PENDING again, the row deleted); kept UNKNOWN (the row without an outcome) when the bank's answer
// is unknown, for the reconciler. Layer 2's key lost before the bank (nothing moved): released, or kept in doubt if
// this claim was taken over. A claim lost before the bank (taken over after a pause) is not this attempt's to write.
import { decide, reason } from '../../telemetry/spans.ts';
import { type Answer, type Attempt, type Defence, type Lease, lostBy, type OrderHold, stopped } from '../defence.ts';
import type { Layer } from '../layers.ts';
import { type ClaimFate, claimFate } from '../release.ts';
import {
  claimOrder,
  type DatabaseLayers,
  keepClaimUnknown,
  orderLock,
  type Payer,
  recordOutcome,
  recordUnguarded,
  releaseClaim,
  renewClaim,
} from './store.ts';

type Switches = DatabaseLayers & { bankKey: boolean };

/** What this attempt's claim on the order came to: held (perhaps taken over), or a duplicate's answer. */
type OrderClaim = { kind: 'held'; hold: OrderHold; tookOver: boolean } | { kind: 'stopped'; answer: Answer };

/** Layers 3 and/or 4 as one defence: the order claimed by the statement the switched-on layers make. */
export function orderClaimDefence(layers: Switches): Defence {
  const layer: Layer = layers.stateMachine ? 'stateMachine' : 'uniqueConstraint';
  return {
    layer,
    async guard(attempt, next) {
      const claim = await claimTheOrder(attempt, layers);
      if (claim.kind === 'stopped') return stopped(claim.answer);
      const { hold, tookOver } = claim;
      const end = await next({ lease: leaseOf(attempt, hold, layers, tookOver) });
      // Before the bank only a claim lost while this attempt was away stops it after the database. This one lost
      // is another's now: not this attempt's to write. Layer 2's key lost (renewed after this claim), this claim is
      // still held and nothing moved: the release rule's, as after the bank (release.ts), so that the order is not
      // left held for a lease by an attempt that has answered.
      if (end.kind === 'stopped' && lostBy(end.answer, layer)) return end;
      await settle(attempt, hold, layers, claimFate(attempt.release, end, tookOver));
      return end;
    },
  };
}

async function claimTheOrder(attempt: Attempt, layers: Switches): Promise<OrderClaim> {
  const { span, orderNo, attemptId } = attempt;
  for (let tries = 0; ; tries++) {
    if (attempt.at) await attempt.at('order.claim');
    const claimed = await claimOrder(layers, orderNo, attemptId, new Date(attempt.now()), payerOf(attempt));
    if ('fence' in claimed) {
      const { fence } = claimed;
      if (layers.stateMachine) decide(span, 'stateMachine', 'claimed', () => reason('dbClaimed', { fence }));
      if (layers.uniqueConstraint)
        decide(span, 'uniqueConstraint', 'inserted', () => reason('dedupInserted', { orderNo, fence }));
      return { kind: 'held', hold: { orderNo, attemptId, fence }, tookOver: false };
    }
    const answer = await answerDuplicate(attempt, claimed.refusedBy, layers);
    if (answer !== 'again') return answer;
    // The claim went away between this attempt's claim and its read (its holder released it): once more.
    if (tries > 0) return stillProcessing(attempt, claimed.refusedBy);
  }
}

/** Who claims, when nobody has checked yet that they may pay the order at this amount (the claim then does). */
function payerOf({ checkAtClaim, caller, amountCents }: Attempt): Payer | undefined {
  return checkAtClaim ? { caller, amountCents } : undefined;
}

/**
 * A duplicate. The first outcome if there is one; a dead claim is taken over by this request, which pays
 * once the bank has said nothing can be charged twice (reconcile.ts). `said`: the layer whose statement
 * refused it (the reasons' "0 rows", "unique violation (P2002)").
 */
async function answerDuplicate(attempt: Attempt, said: Layer, layers: Switches): Promise<OrderClaim | 'again'> {
  const { span } = attempt;
  const answer = await attempt.recovery.reconcile({ attemptId: attempt.attemptId, bankKey: layers.bankKey });
  switch (answer.kind) {
    case 'settled': {
      const found = answer.found ? 'yes' : 'no';
      decide(span, said, 'stopped', () => reason('dbSettled', { layer: said, found, status: answer.outcome.status }));
      // Found by the reconciler: the dead claim's own charge, answered as its replay. Else the order was
      // already settled, by another intent as far as this request can tell.
      const answeredBy = answer.found ? 'reconciler' : said;
      const outcome = answer.outcome;
      return { kind: 'stopped', answer: { kind: 'duplicate', outcome, answeredBy, existing: !answer.found } };
    }
    case 'resumed':
      decide(span, said, 'takeover', () => reason('dbTakeover', { layer: said, fence: answer.hold.fence }));
      return { kind: 'held', hold: answer.hold, tookOver: true };
    case 'waiting':
      decide(span, said, 'stopped', () => reason('dbConfirming', { layer: said }));
      return { kind: 'stopped', answer: { kind: 'in_progress', answeredBy: 'reconciler' } };
    case 'gone':
      return { kind: 'stopped', answer: { kind: 'order_not_found' } };
    case 'amountMismatch':
      return { kind: 'stopped', answer: { kind: 'amount_mismatch', orderAmountCents: answer.orderAmountCents } };
    case 'idle':
    case 'released':
      return 'again';
    case 'running':
      return stillProcessing(attempt, said);
  }
}

function stillProcessing(attempt: Attempt, said: Layer): OrderClaim {
  decide(attempt.span, said, 'stopped', () => reason('dbStillProcessing', { layer: said }));
  return { kind: 'stopped', answer: { kind: 'in_progress', answeredBy: said } };
}

/** The order's claim as the bank checks it, and its renewal after a pause. */
function leaseOf(attempt: Attempt, hold: OrderHold, layers: DatabaseLayers, tookOver: boolean): Lease {
  const layer: Layer = layers.stateMachine ? 'stateMachine' : 'uniqueConstraint';
  return {
    fence: { lock: orderLock(hold.orderNo), token: hold.fence },
    byLock: false,
    layer,
    tookOver,
    async renew(now) {
      if (attempt.at) await attempt.at('order.renew');
      if (await renewClaim(hold, layers, new Date(now))) return undefined;
      decide(attempt.span, layer, 'lost', () => reason('claimLost'));
      return { kind: 'in_progress', answeredBy: layer, takenOver: true };
    },
  };
}

/** The bank's verdict (and what failed after it), written on the order this attempt holds. Never throws: money may have moved. */
async function settle(attempt: Attempt, hold: OrderHold, layers: DatabaseLayers, fate: ClaimFate): Promise<void> {
  const { span, orderNo } = attempt;
  const layer: Layer = layers.stateMachine ? 'stateMachine' : 'uniqueConstraint';
  switch (fate.kind) {
    case 'complete':
      // A failure here happens after the money moved: the reconciler settles the order from the bank.
      if (attempt.at) await attempt.at('order.record');
      await recordOutcome(fate.outcome, hold, layers).then(
        (recorded) => {
          if (!recorded) decide(span, 'outcome', 'late', () => reason('outcomeLate'));
          else if (fate.afterFailure)
            decide(span, layer, 'completed', () => reason('dbCompletedAfterFailure', { status: fate.outcome.status }));
        },
        (error: Error) =>
          console.error(`[pay] ${orderNo}: outcome not recorded (${error.message}); reconciliation will`),
      );
      return;
    case 'release':
      if (attempt.at) await attempt.at('order.release');
      await releaseClaim(hold).then(
        () => {
          if (fate.onError) decide(span, layer, 'released', () => reason('dbReleasedOnError', { layer }));
        },
        (error: Error) => console.error(`[pay] ${orderNo}: claim not released (${error.message})`),
      );
      return;
    case 'keepUnknown':
      if (attempt.at) await attempt.at('order.keepUnknown');
      await keepClaimUnknown(hold, new Date(fate.since ?? attempt.now())).catch(() => {});
      return;
    case 'leave':
      decide(span, layer, 'left', () => reason('dbLeft', { layer, leaseMs: attempt.leaseMs }));
      return;
  }
}

/**
 * Layers 3 and 4 both off: nothing guards the order. It is still written when the bank answers, unguarded:
 * the last request to finish writes its outcome over the first one's (the card statement, not this row,
 * shows how many charges there were).
 */
export const unguardedOrder: Defence = {
  name: 'order',
  async guard(attempt, next) {
    const end = await next();
    if (end.kind === 'banked' && end.verdict.kind === 'settled') {
      if (attempt.at) await attempt.at('order.record');
      await recordUnguarded(end.verdict.outcome).catch((error: Error) =>
        console.error(`[pay] ${attempt.orderNo}: outcome not recorded (${error.message}); reconciliation will`),
      );
    }
    return end;
  },
};
