import 'server-only';
// Reconciliation: a payment whose claim is dead (its attempt died, stalled past its lease, or timed out at
// the bank) is settled by asking the bank "did you charge this order?", never by guessing. It is itself a
// concurrent actor, so it acts only under a claim of its own:
//   1. take the dead claim over (a compare-and-set on exactly the claim judged dead; its token rises);
//   2. ask the bank under the new token (the old holder's charges are refused from then on);
//   3. a charge: the order is PAID by it. No charge, and none can land (the bank never saw the old claim's
//      token, or the settlement window has passed): nothing moved, the claim is released, or the duplicate
//      that took it over goes on to pay. No charge *yet*: the claim stays in doubt, and it asks again later.
// Runs at start-up, every few seconds, and on demand when a duplicate finds a claim that has gone stale.
import type { Reconciled } from '../defences/defence.ts';
import { type AfterBank, type ClaimState, judgeBankAnswer, judgeClaim } from '../defences/fencing.ts';
import {
  type ClaimView,
  claimOf,
  completeStaleRow,
  findDeadClaims,
  leaveClaimInDoubt,
  orderLock,
  ordersWithoutTheirCharge,
  readClaim,
  recordUnrecordedCharge,
  releaseTakenClaim,
  resumeTakenClaim,
  settleClaim,
  takeOverClaim,
} from '../defences/order-claim/store.ts';
import { outcomeFromCharge } from '../defences/outcome.ts';
import type { RaceHook } from '../defences/race-points.ts';
import { bootPrefix, instanceName, newAttemptId, newRequestId } from '../instance.ts';
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
import {
  askBank,
  BANK_SETTLEMENT_WINDOW_MS,
  type Charge,
  type Fence,
  REPORT_PAGE,
  type SettledCharge,
  settlementReport,
} from './bank.ts';
import { policySource } from './policy.ts';

export type { Reconciled } from '../defences/defence.ts';

export type ReconcileOptions = {
  /** How long a claim may live unrenewed; by default the order's own lab setting. */
  leaseMs?: number;
  /**
   * How many leases a held claim must have been abandoned for before this reconciler takes it over (1 by
   * default). The background sweep waits two: a paying duplicate, which takes over after one lease, pays
   * at once, while the sweep only releases, and a payer meeting the sweep's fresh claim is told "in progress".
   */
  patience?: number;
  /** An attempt known to be dead whatever its age (a previous life of this instance). */
  deadAttempt?: (attemptId: string) => boolean;
  /**
   * A payment that found the claim dead: it takes the claim over itself and, once nothing can be charged
   * twice (nothing can land, or the bank's own key will return what does), goes on to pay under it.
   */
  payer?: { attemptId: string; bankKey: boolean };
  now?: () => number;
  at?: RaceHook;
  /** The span of the payment that called it, if one did (its trace then shows the reconciler's work). */
  parent?: Span;
  /** New attempt ids, for a reconciler's takeover (newAttemptId by default). */
  attemptIds?: () => string;
};

/** Settles one order, if its claim is dead. */
export async function reconcileOrder(orderNo: string, options: ReconcileOptions = {}): Promise<Reconciled> {
  const now = options.now ?? Date.now;
  if (options.at) await options.at('reconcile.read');
  const view = await readClaim(orderNo);
  if (!view) return { kind: 'gone' };
  if (view.recorded) {
    // Final already; a dedup row its holder did not get to complete is given the outcome.
    if (view.row) {
      if (options.at) await options.at('reconcile.completeRow');
      await completeStaleRow(view, view.recorded);
    }
    return { kind: 'settled', outcome: view.recorded };
  }
  const claim = claimOf(view);
  if (!claim) return { kind: 'idle' };
  const leaseMs =
    (options.leaseMs ?? (await policySource().forOrder({ orderNo, owner: view.owner, lab: view.lab })).leaseMs) *
    (options.patience ?? 1);
  const liveness = judgeClaim(claim, { now: now(), leaseMs, deadAttempt: options.deadAttempt });
  if (liveness.kind === 'live') return { kind: 'running' };

  const span = startSpan(
    'reconcile',
    {
      attributes: {
        [ATTR.orderNo]: orderNo,
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

/** Steps 1-3 for a claim judged dead, each decision recorded on the reconciler's span. */
async function takeOverAndSettle(
  view: ClaimView,
  claim: ClaimState,
  options: ReconcileOptions,
  span: Span,
): Promise<Reconciled> {
  const { orderNo } = view;
  const now = options.now ?? Date.now;
  const done = (result: Reconciled, decision: Decision, why: Reason): Reconciled => {
    decide(span, 'reconcile', decision, why);
    return result;
  };
  // 1. Take the dead claim over: only if it is still the claim judged dead.
  if (options.at) await options.at('reconcile.takeOver');
  const taker = options.payer?.attemptId ?? (options.attemptIds ?? newAttemptId)();
  const hold = await takeOverClaim(view, taker, new Date(now()));
  if (!hold) {
    const again = await readClaim(orderNo);
    return again?.recorded ? { kind: 'settled', outcome: again.recorded } : { kind: 'running' };
  }
  decide(
    span,
    'reconcile',
    'takeover',
    reason('reconcileTakeover', {
      holder: claim.holder === null ? 'none' : 'dead',
      oldFence: claim.fence,
      fence: hold.fence,
    }),
  );

  // 2. Ask the bank, under the new token.
  const { verdict, previousToken, askedAt } = await askBankAfterTakeover(
    { merchantRef: orderNo, fence: { lock: orderLock(orderNo), token: hold.fence } },
    claim,
    options,
  );

  // 3. Settle, release, resume, or wait.
  if (verdict.kind === 'charged') {
    const outcome = outcomeFromCharge(orderNo, verdict.charge);
    return (await settleClaim(hold, outcome))
      ? done(
          { kind: 'settled', outcome, found: true },
          'charged',
          reason('reconcileCharged', { charge: verdict.charge.id }),
        )
      : done({ kind: 'running' }, 'lost', reason('reconcileLost'));
  }
  const payer = options.payer;
  if (verdict.kind === 'nothing' || (verdict.kind === 'wait' && payer?.bankKey)) {
    // Why nothing can be charged twice (timeline.json's reconcile reasons word each).
    const why =
      verdict.kind === 'nothing'
        ? previousToken === null || previousToken < claim.firstFence
          ? 'neverSeen' // the bank has no charge and never saw a claim of this chain
          : 'windowPassed' // no charge, and the settlement window has passed
        : 'bankKey'; // no charge yet, but this payment sends the bank's key: the bank returns whatever lands
    if (payer) {
      return (await resumeTakenClaim(hold, new Date(now())))
        ? done({ kind: 'resumed', hold }, 'resumed', reason('reconcileResumed', { why }))
        : done({ kind: 'running' }, 'lost', reason('reconcileLost'));
    }
    return (await releaseTakenClaim(hold))
      ? done({ kind: 'released' }, 'released', reason('reconcileReleased', { why }))
      : done({ kind: 'running' }, 'lost', reason('reconcileLost'));
  }
  const until = verdict.kind === 'wait' ? verdict.until : askedAt;
  await leaveClaimInDoubt(hold, new Date(claim.unknownSince ?? askedAt));
  return done(
    { kind: 'waiting', retryAfterMs: Math.max(0, until - askedAt) },
    'waiting',
    reason('reconcileWaiting', { until: new Date(until).toISOString().slice(11, 19) }),
  );
}

/**
 * Asks the bank under a taker's new token, between the reconciler's named points, and says what the
 * answer allows for the claim that was taken over (`seen`: its token, and since when it is in doubt).
 */
export async function askBankAfterTakeover(
  query: { merchantRef: string; fence: Fence; byLock?: boolean },
  seen: ClaimState,
  context: { now?: () => number; at?: RaceHook },
): Promise<{ verdict: AfterBank<Charge>; previousToken: number | null; askedAt: number }> {
  const now = context.now ?? Date.now;
  if (context.at) await context.at('reconcile.bank');
  const answer = await askBank(query, now);
  const askedAt = now();
  if (context.at) await context.at('reconcile.write');
  const verdict = judgeBankAnswer({
    ...answer,
    firstFence: seen.firstFence,
    unknownSince: seen.unknownSince,
    now: askedAt,
    windowMs: BANK_SETTLEMENT_WINDOW_MS,
  });
  return { verdict, previousToken: answer.previousToken, askedAt };
}

export type SweepOptions = {
  /** At start-up: claims of this instance's previous life are dead, however young. */
  atStartup?: boolean;
  now?: () => number;
  at?: RaceHook;
  /** Only these orders (an operator's, or the race explorer's own); by default every order. */
  orderNos?: string[];
  /** The attempt-id prefix of this instance's current life (bootPrefix() by default): older lives' are dead at start-up. */
  life?: string;
  /** New attempt ids, for the sweep's takeovers (newAttemptId by default). */
  attemptIds?: () => string;
  /**
   * The settlement report covers the charges landed since then (ms): the loop passes its last report's time,
   * less a margin. By default a day back, or, for named orders, every charge they ever had.
   */
  landedSince?: number;
  /** The settlement report lists the charges that landed by then (the sweep's time, unless said otherwise). */
  settledBy?: number;
};

/** Settles every payment whose claim is dead. Returns how many it looked at. */
export async function reconcileStalePayments(options: SweepOptions = {}): Promise<number> {
  const now = options.now ?? Date.now;
  const mine = `${instanceName()}.`;
  const current = options.life ?? bootPrefix();
  // At start-up, claims taken by this instance's previous life are dead now, however young they are.
  const deadAttempt = options.atStartup ? (id: string) => id.startsWith(mine) && !id.startsWith(current) : undefined;
  // Candidates, found in SQL with each order's own lease (the global one unless its lab says otherwise):
  // claims abandoned for two leases (the sweep leaves the first to the payers), unknown outcomes nobody
  // holds, and, at start-up, this instance's previous life's claims. Each is judged again by reconcileOrder.
  const patience = 2;
  if (options.at) await options.at('sweep.scan');
  const globalLease = await policySource().leaseMs();
  const orderNos = await findDeadClaims({
    at: new Date(now()),
    defaultLeaseMs: globalLease,
    patience,
    previousLifeOf: options.atStartup ? mine : undefined,
    orderNos: options.orderNos,
  });
  for (const orderNo of orderNos) {
    try {
      await reconcileOrder(orderNo, { deadAttempt, now, patience, at: options.at, attemptIds: options.attemptIds });
    } catch (error) {
      console.error(`[reconcile] ${orderNo}: ${error instanceof Error ? error.message : error}`);
    }
  }
  return orderNos.size + (await recordFromSettlementReport(options, now));
}

/**
 * A refund's question about an order its row says is not paid: the row may be behind the bank (a payment charged,
 * then its record refused: the database went away as it answered, or its process died). The sweep, for this order
 * alone: a claim abandoned for two leases is taken over and settled by the bank's answer (a paying duplicate may take
 * it after one, and pay), a charge nobody recorded is recorded. Then whether a payment is still under way: a claim
 * held (live, or in doubt until a charge can no longer land) on an order with no outcome recorded. With layers 3 and
 * 4 off nothing marks a payment under way: a charge that lands later is the next sweep's.
 */
export async function settlePaymentNow(orderNo: string, now: () => number = Date.now): Promise<{ underWay: boolean }> {
  await reconcileStalePayments({ orderNos: [orderNo], now });
  const view = await readClaim(orderNo);
  return { underWay: view !== undefined && view.recorded === undefined && claimOf(view) !== null };
}

/**
 * Reconciliation against the bank's books: every charge on the settlement report whose order is PENDING (or
 * DECLINED by another attempt) was made under no claim the sweep could find (layers 3 and 4 off: layer 2 alone, layer 5 alone, none), by an
 * attempt that died or lost its answer. The order becomes PAID by its first such charge. Returns how many.
 */
async function recordFromSettlementReport(options: SweepOptions, now: () => number): Promise<number> {
  if (options.at) await options.at('sweep.report');
  const landedSince = options.landedSince ?? (options.orderNos ? 0 : now() - 86_400_000);
  const window = { landedAfter: new Date(landedSince), landedBy: new Date(options.settledBy ?? now()) };
  let recorded = 0;
  // Page after page, to the report's end: most of its charges are recorded already, and a page cut before the
  // merchant's books are read would leave an unrecorded charge beyond it for good (the next sweep's window starts
  // later).
  for (let after: SettledCharge | undefined; ; ) {
    const report = await settlementReport({ ...window, merchantRefs: options.orderNos, after });
    if (report.length === 0) break;
    const pending = await ordersWithoutTheirCharge([...new Set(report.map((charge) => charge.merchantRef))]);
    for (const { orderNo } of pending) {
      const charge = report.find((candidate) => candidate.merchantRef === orderNo);
      if (!charge) continue;
      if (options.at) await options.at('sweep.record');
      if (await recordUnrecordedCharge(outcomeFromCharge(orderNo, charge))) recorded++;
    }
    if (report.length < REPORT_PAGE) break;
    after = report.at(-1);
  }
  return recorded;
}
