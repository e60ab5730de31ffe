import 'server-only';
import type { Fence } from '../defences/fencing.ts';
// A refund's recovery path, as a payment's (lib/payments/reconcile.ts): a refund whose claim is dead (its attempt
// died, stalled past its lease, or timed out at the bank) is settled by asking the bank "did you refund this?",
// never by guessing, and only under a claim of the reconciler's own:
//   1. take the dead claim over (a compare-and-set on exactly the claim judged dead; its token rises);
//   2. ask the bank under the new token (the old holder's refunds are refused from then on);
//   3. a refund: SUCCEEDED by it. No refund, and none can land: nothing moved, the claim is given back (and the
//      refund's amount comes off the ledger), or the duplicate that took it over goes on. None *yet*: in doubt.
// The decisions are here; the writes are the refund claim's store, each a compare-and-set.
import { type AfterBank, type ClaimState, judgeBankAnswer, judgeClaim } from '../defences/fencing.ts';
import type { RaceHook } from '../defences/race-points.ts';
import { outcomeFromRefund, type Refunded, type RefundReconciled, refundReference } from '../defences/refund.ts';
import {
  completeStaleRefundRow,
  findDeadRefundClaims,
  leaveRefundClaimInDoubt,
  type RefundClaimView,
  type RefundRef,
  readRefundClaim,
  recordUnrecordedRefund,
  refundClaimOf,
  refundLock,
  releaseTakenRefundClaim,
  resumeTakenRefundClaim,
  settleRefundClaim,
  takeOverRefundClaim,
  unclaimedRefundsOf,
} from '../defences/refund-claim/store.ts';
import { bootPrefix, instanceName, newAttemptId, newRequestId } from '../instance.ts';
import { BANK_SETTLEMENT_WINDOW_MS, REPORT_PAGE } from '../payments/bank.ts';
import { askBankRefunds, type ReportedRefund, refundReport } from '../payments/bank-refunds.ts';
import { policySource } from '../payments/policy.ts';
import type { ReconcileOptions } from '../payments/reconcile.ts';
import {
  ATTR,
  type Decision,
  decide,
  hashCaller,
  type Reason,
  reason,
  type Span,
  startSpan,
} from '../telemetry/spans.ts';

/** Settles one refund, if its claim is dead. */
export async function reconcileRefund(ref: RefundRef, options: ReconcileOptions = {}): Promise<RefundReconciled> {
  const now = options.now ?? Date.now;
  if (options.at) await options.at('reconcile.read');
  const view = await readRefundClaim(ref);
  if (!view) return { kind: 'gone' };
  if (view.recorded) {
    if (view.row) {
      if (options.at) await options.at('reconcile.completeRow');
      await completeStaleRefundRow(view, view.recorded);
    }
    return { kind: 'settled', outcome: view.recorded };
  }
  const claim = refundClaimOf(view);
  if (!claim) return { kind: 'idle' };
  const policy = await policySource().forOrder({ orderNo: ref.orderNo, owner: view.owner, lab: view.lab });
  const leaseMs = (options.leaseMs ?? policy.leaseMs) * (options.patience ?? 1);
  if (judgeClaim(claim, { now: now(), leaseMs, deadAttempt: options.deadAttempt }).kind === 'live') {
    return { kind: 'running' };
  }
  const span = startSpan(
    'reconcile',
    {
      attributes: {
        [ATTR.orderNo]: ref.orderNo,
        [ATTR.channel]: 'reconciler',
        [ATTR.requestId]: newRequestId(),
        [ATTR.instance]: instanceName(),
        ...(view.owner ? { [ATTR.owner]: hashCaller(view.owner) } : {}),
      },
    },
    options.parent,
  );
  try {
    return await takeOverAndSettle(view, claim, options, span);
  } finally {
    span.end();
  }
}

async function takeOverAndSettle(
  view: RefundClaimView,
  claim: ClaimState,
  options: ReconcileOptions,
  span: Span,
): Promise<RefundReconciled> {
  const now = options.now ?? Date.now;
  const done = (result: RefundReconciled, decision: Decision, why: Reason): RefundReconciled => {
    decide(span, 'reconcile', decision, why);
    return result;
  };
  // 1. Take the dead claim over: only if it is still the claim judged dead.
  if (options.at) await options.at('reconcile.takeOver');
  const taker = options.payer?.attemptId ?? (options.attemptIds ?? newAttemptId)();
  const hold = await takeOverRefundClaim(view, taker, new Date(now()));
  if (!hold) {
    const again = await readRefundClaim(view);
    return again?.recorded ? { kind: 'settled', outcome: again.recorded } : { kind: 'running' };
  }
  const holder = claim.holder === null ? 'none' : 'dead';
  decide(
    span,
    'reconcile',
    'takeover',
    reason('reconcileTakeover', { holder, oldFence: claim.fence, fence: hold.fence }),
  );
  // 2. Ask the bank, under the new token.
  const reference = refundReference(view.orderNo, view.refundKey);
  const { verdict, previousToken, askedAt } = await askBankAfterRefundTakeover(
    { merchantRef: reference, fence: { lock: refundLock(view), token: hold.fence } },
    claim,
    options,
  );
  // 3. Settle, give back, resume, or wait.
  if (verdict.kind === 'charged') {
    const outcome = outcomeFromRefund(view.orderNo, verdict.charge);
    return (await settleRefundClaim(hold, outcome))
      ? done(
          { kind: 'settled', outcome, found: true },
          'refunded',
          reason('reconcileRefunded', { refund: verdict.charge.id }),
        )
      : done({ kind: 'running' }, 'lost', reason('reconcileLost'));
  }
  const payer = options.payer;
  if (verdict.kind === 'nothing' || (verdict.kind === 'wait' && payer?.bankKey)) {
    const why =
      verdict.kind === 'nothing'
        ? previousToken === null || previousToken < claim.firstFence
          ? 'neverSeen'
          : 'windowPassed'
        : 'bankKey';
    if (payer) {
      return (await resumeTakenRefundClaim(hold, new Date(now())))
        ? done({ kind: 'resumed', hold }, 'resumed', reason('reconcileRefundResumed', { why }))
        : done({ kind: 'running' }, 'lost', reason('reconcileLost'));
    }
    return (await releaseTakenRefundClaim(hold))
      ? done({ kind: 'released' }, 'released', reason('reconcileRefundReleased', { why }))
      : done({ kind: 'running' }, 'lost', reason('reconcileLost'));
  }
  const until = verdict.kind === 'wait' ? verdict.until : askedAt;
  await leaveRefundClaimInDoubt(hold, new Date(claim.unknownSince ?? askedAt));
  return done(
    { kind: 'waiting', retryAfterMs: Math.max(0, until - askedAt) },
    'waiting',
    reason('reconcileRefundWaiting', { until: new Date(until).toISOString().slice(11, 19) }),
  );
}

/** Asks the bank about a refund under a taker's new token, and says what the answer allows for the claim `seen`. */
export async function askBankAfterRefundTakeover(
  query: { merchantRef: string; fence: Fence; byLock?: boolean },
  seen: ClaimState,
  context: { now?: () => number; at?: RaceHook },
): Promise<{ verdict: AfterBank<Refunded>; previousToken: number | null; askedAt: number }> {
  const now = context.now ?? Date.now;
  if (context.at) await context.at('reconcile.bank');
  const answer = await askBankRefunds(query, now);
  const askedAt = now();
  if (context.at) await context.at('reconcile.write');
  const verdict = judgeBankAnswer({
    charges: answer.refunds,
    previousToken: answer.previousToken,
    firstFence: seen.firstFence,
    unknownSince: seen.unknownSince,
    now: askedAt,
    windowMs: BANK_SETTLEMENT_WINDOW_MS,
  });
  return { verdict, previousToken: answer.previousToken, askedAt };
}

/** Settles every refund whose claim is dead (the sweep, beside the payments'). Returns how many it looked at. */
export async function reconcileStaleRefunds(
  options: {
    atStartup?: boolean;
    now?: () => number;
    at?: RaceHook;
    orderNos?: string[];
    life?: string;
    attemptIds?: () => string;
    /** The bank's refunds landed since then are compared with the refunds recorded (by default a day back). */
    landedSince?: number;
    /** …and by then (a refund is settled once the settlement window has passed: by default now). */
    settledBy?: number;
  } = {},
): Promise<number> {
  const now = options.now ?? Date.now;
  const mine = `${instanceName()}.`;
  const current = options.life ?? bootPrefix();
  const deadAttempt = options.atStartup ? (id: string) => id.startsWith(mine) && !id.startsWith(current) : undefined;
  if (options.at) await options.at('sweep.scan');
  const refs = await findDeadRefundClaims({
    at: new Date(now()),
    defaultLeaseMs: await policySource().leaseMs(),
    patience: 2,
    previousLifeOf: options.atStartup ? mine : undefined,
    orderNos: options.orderNos,
  });
  for (const ref of refs) {
    try {
      await reconcileRefund(ref, { deadAttempt, now, patience: 2, at: options.at, attemptIds: options.attemptIds });
    } catch (error) {
      const reference = refundReference(ref.orderNo, ref.refundKey);
      console.error(`[reconcile] refund ${reference}: ${error instanceof Error ? error.message : error}`);
    }
  }
  return refs.length + (await recordFromRefundReport(options, now));
}

/**
 * Reconciliation against the bank's books, for refunds: every refund the bank made that no refund records and
 * nothing claims becomes its refund's outcome (as the payments' settlement report does for charges).
 */
async function recordFromRefundReport(
  options: { at?: RaceHook; landedSince?: number; settledBy?: number; orderNos?: string[] },
  now: () => number,
): Promise<number> {
  if (options.at) await options.at('sweep.report');
  const window = {
    landedAfter: new Date(options.landedSince ?? now() - 86_400_000),
    landedBy: new Date(options.settledBy ?? now()),
    orderNos: options.orderNos,
  };
  let recorded = 0;
  // Page after page, to the report's end (as the payments' settlement report is read).
  for (let after: ReportedRefund | undefined; ; ) {
    const report = await refundReport({ ...window, after });
    if (report.length === 0) break;
    recorded += await recordReported(report, options);
    if (report.length < REPORT_PAGE) break;
    after = report.at(-1);
  }
  return recorded;
}

/** Of one page of the bank's refunds, those whose refund records nothing and nothing claims, recorded. */
async function recordReported(report: ReportedRefund[], options: { at?: RaceHook; orderNos?: string[] }) {
  // The refunds they belong to that record nothing and that nothing claims (the merchant's database).
  const unclaimed = await unclaimedRefundsOf([...new Set(report.map((refunded) => refunded.merchantRef))]);
  let recorded = 0;
  for (const refunded of report) {
    const ref = unclaimed.find(
      (candidate) => refundReference(candidate.orderNo, candidate.refundKey) === refunded.merchantRef,
    );
    if (!ref || (options.orderNos && !options.orderNos.includes(ref.orderNo))) continue;
    if (options.at) await options.at('sweep.record');
    if (await recordUnrecordedRefund(ref, outcomeFromRefund(ref.orderNo, refunded))) recorded++;
  }
  return recorded;
}
