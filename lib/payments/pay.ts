import 'server-only';
import { getDb } from '../db.ts';
// The payment pipeline: one request, top to bottom, through the enabled defences in the article's order,
// then the bank, then the outcome. Used by the checkout page (server action) and by POST /api/payments.
//
//   1. one-time token      (browser only)   a double submit from the same page stops here
//   2. request key          Redis            retries of the same intent get the first outcome
//   3. state machine        PostgreSQL       any duplicate for the order: the claim is a conditional update
//   4. unique constraint    PostgreSQL       the last millimetre, in the same statement as 3
//   5. bank key             the bank         the bank returns its first charge for the order's key
//   6. the bank             charges every call it receives that its fence lets through
//   7. record the outcome   database first, then the request key; never released after a charge
//
// Every claim (2, 3, 4) carries a fencing token; the bank call carries the claim's token and the bank
// refuses a stale one, so an attempt that stalled past its lease cannot charge after another took over.
// A claim found dead is taken over and settled by asking the bank (reconcile.ts), never by guessing.
// Which layers run, and which faults the bank injects, comes from the lab settings (global, or the
// order's own). A layer that is off is skipped, so the demo can show the duplicate it would have stopped.
import { bankKeyFor } from '../defences/bank-key.ts';
import { checkoutTokenKey, consumeCheckoutToken } from '../defences/checkout-token.ts';
import { DuplicateRecordError, insertPaymentDedupRow } from '../defences/dedup.ts';
import { requestKeyFor, shortKey } from '../defences/key-strategy.ts';
import { claimOrder, claimOrderWithDedupRow } from '../defences/payment-state.ts';
import {
  claimRequestKey,
  completeRequestKey,
  type HeldKey,
  markRequestKeyUnknown,
  peekRequestKey,
  releaseRequestKey,
  renewRequestKey,
  requestKeyLock,
  takeOverRequestKey,
} from '../defences/request-key.ts';
import {
  type ClaimDecision,
  fingerprintOf,
  type RequestKeyClaim,
  requestKeyName,
} from '../defences/request-key-record.ts';
import { env } from '../env.ts';
import { instanceName, newAttemptId } from '../instance.ts';
import { reason, type TimelineReason } from '../lab/reasons.ts';
import { type Faults, LAYERS, type Layer, type Layers } from '../lab/settings.ts';
import { getLabSettings, getLabSettingsFor, settingsForOrder } from '../lab/settings-store.ts';
import { type Lane, startLane, viewerOf } from '../lab/timeline.ts';
import type { TimelineEvent } from '../lab/timeline-event.ts';
import type { CallerScope } from '../session.ts';
import {
  askBank,
  BankDeclinedError,
  BankFencedError,
  BankKeyInUseError,
  BankTimeoutError,
  BankUnavailableError,
  chargeCard,
  type Fence,
} from './bank.ts';
import { type Hold, keepClaimUnknown, orderLock, recordOutcome, releaseClaim, renewClaim } from './order-claim.ts';
import { mayUse } from './orders.ts';
import { outcomeFromCharge, type PaymentOutcome, parseOutcome } from './outcome.ts';
import type { RaceHook } from './race-points.ts';
import { askBankAfterTakeover, reconcileOrder } from './reconcile.ts';

export type PayRequest = {
  orderNo: string;
  /** API callers state the amount; it must be the order's. The browser pays the order's amount. */
  amountCents?: number;
  caller: CallerScope;
  channel: 'browser' | 'api';
  /**
   * The one-time token the checkout page received when it loaded. An API caller acting for a screen
   * (a mobile app: GET /api/tokens when the screen opens) may send one too; a service call has none.
   */
  checkoutToken?: string;
  /** API: the caller's Idempotency-Key. The browser's key is the order number (the business identity). */
  idempotencyKey?: string;
  /** The parameters as submitted (the form's fields, the JSON body): the lab's `paramHash` keys hash them. */
  params?: Record<string, string | number>;
  /** The key the checkout form minted for this submit: the lab's `perSubmit` keys. */
  submitKey?: string;
  /** The id the route gave this request (its X-Request-Id): its lane on the timeline. */
  requestId?: string;
};

/** Who gave the answer: a defence layer, the bank, or the reconciler it called. */
export type Answerer = Layer | 'bank' | 'reconciler';

export type PayResult = {
  requestId: string;
} /** This request ran the payment: the bank charged (or declined) the card. */ & (
  | { kind: 'completed'; outcome: PaymentOutcome }
  /**
   * A duplicate, answered with the first request's outcome. `existing`: the payment was made for another
   * intent (another key, another tab), so this request reports it rather than claiming it (HTTP 200, not
   * 201); a request key keeps this with the outcome, so its replays answer exactly as it did.
   */
  | { kind: 'duplicate'; outcome: PaymentOutcome; answeredBy: Answerer; existing: boolean }
  /**
   * The first request is still running, or its outcome is being confirmed with the bank. The caller is
   * told to retry after 1 s, however long the wait may be (docs/decisions/014-answers-in-doubt.md).
   */
  | { kind: 'in_progress'; answeredBy: Answerer }
  /** Layer 1: this page's token was already used, has expired, or is not this session's. */
  | { kind: 'already_submitted' }
  /** Layer 2: the key was used before with a different payload, or on another endpoint (`usedOn`). */
  | { kind: 'mismatch'; usedOn?: string }
  /** The bank failed before charging; nothing moved and every claim was released: try again. */
  | { kind: 'failed_retryable'; reason: string }
  | { kind: 'order_not_found' }
  | { kind: 'amount_mismatch'; orderAmountCents: number }
);

type Result = PayResult extends infer R ? (R extends { requestId: string } ? Omit<R, 'requestId'> : never) : never;

export type PayOptions = {
  /** How long layer 2 keeps a final outcome (and a claim, for a retry to find). */
  resultTtlSeconds: number;
  /** The lab's "crash after charge" fault: by default the process dies on the spot (SIGKILL). */
  crash: () => never;
  publish?: (events: TimelineEvent[]) => void;
  /** The clock leases and the bank's statement are judged by (the race explorer's is virtual). */
  now: () => number;
  /** Tests only: waits at the pipeline's named points (the race explorer's scheduler). */
  at?: RaceHook;
  /** Tests only: this attempt's own faults, over the order's (one attempt crashes, its retry does not). */
  faults?: Partial<Faults>;
};

export function defaultPayOptions(): PayOptions {
  return {
    resultTtlSeconds: env().REQUEST_KEY_RESULT_TTL_SECONDS,
    crash: () => {
      process.kill(process.pid, 'SIGKILL');
      throw new Error('unreachable: the process was killed');
    },
    now: Date.now,
  };
}

export async function pay(request: PayRequest, options: PayOptions = defaultPayOptions()): Promise<PayResult> {
  const lane = startLane(
    {
      orderNo: request.orderNo,
      channel: request.channel,
      instance: instanceName(),
      viewers: [viewerOf(request.caller)],
    },
    options.publish,
    request.requestId,
  );
  const result = await runPipeline(request, options, lane);
  lane.mark('outcome', result.kind, summarize(result));
  lane.flush();
  return { requestId: lane.requestId, ...result } as PayResult;
}

async function runPipeline(request: PayRequest, options: PayOptions, lane: Lane): Promise<Result> {
  const { orderNo, caller } = request;
  const { now, at } = options;

  // 0. The order (only its owner, and the sessions it let in, may pay it: anyone else is told it does not
  //    exist), and the lab settings that apply to it: its owner's lab, or the global one; its own win.
  const [order, globalSettings] = await Promise.all([
    // Raw SQL on the hot path: the model query costs Prisma a query compilation per call (bench/results.md).
    getDb().$queryRaw<Array<{ amountCents: number; lab: unknown; owner: string | null; payers: string[] }>>`
      SELECT amount_cents AS "amountCents", lab, owner, payers FROM orders WHERE order_no = ${orderNo}`.then(
      (rows) => rows[0],
    ),
    getLabSettings(),
  ]);
  if (!order || !mayUse(order, caller)) return { kind: 'order_not_found' };
  if (order.owner) lane.showTo(order.owner);
  const ownersLab = order.owner?.startsWith('s.') ? await getLabSettingsFor(order.owner) : globalSettings;
  const settings = settingsForOrder(ownersLab, order.lab);
  const { layers } = settings;
  const faults = { ...settings.faults, ...options.faults };
  const leaseMs = settings.claims.leaseMs;
  const amountCents = order.amountCents;
  const attemptId = newAttemptId();
  lane.mark(
    'request',
    'received',
    reason('received', { channel: request.channel, cents: amountCents, defences: defencesOn(settings.layers) }),
  );
  // Layer 2's key, as the lab's key strategy makes it (the article's first detail: only `business` holds).
  const keyStrategy = settings.keys.strategy;
  const requestKey = requestKeyFor(keyStrategy, {
    orderNo,
    idempotencyKey: request.idempotencyKey,
    params: request.params ?? { orderNo },
    submitKey: request.submitKey,
  });
  const keyName = requestKeyName(caller, requestKey);
  // The payload as the caller sent it: the same key with another amount is a mismatch, not a retry.
  const fingerprint = fingerprintOf({ orderNo, amountCents: request.amountCents ?? amountCents });
  // Layer 2's key as its steps name it: "key <key> (<strategy>)", the strategy only when it is not `business`.
  const keyShown: KeyShown = { key: shortKey(requestKey), strategy: keyStrategy };

  // 1. One-time token: only the request that deletes the page's token may go on.
  if (request.channel === 'browser' || request.checkoutToken !== undefined) {
    if (!layers.token) {
      lane.mark('token', 'off');
    } else {
      const consumed = request.checkoutToken
        ? await consumeCheckoutToken(orderNo, caller, request.checkoutToken)
        : false;
      if (!consumed) {
        // A caller that names its intent (an Idempotency-Key) is answered by what that key already
        // holds: the first outcome, before the spent token is refused (result idempotency).
        const known =
          layers.requestKey && request.idempotencyKey !== undefined
            ? await peekRequestKey(keyName, fingerprint, { now: now(), leaseMs })
            : undefined;
        if (known) {
          lane.mark('token', 'spent', reason('tokenSpent'));
          return answerFromKey(known, lane, keyShown);
        }
        lane.mark('token', 'stopped', reason('tokenStopped'));
        return { kind: 'already_submitted' };
      }
      lane.mark(
        'token',
        'passed',
        reason('tokenConsumed', { token: checkoutTokenKey(orderNo, caller).split(':').slice(0, 3).join(':') }),
      );
    }
  }

  await at?.('pay.claim');
  // 2. Request key: the business identity of the intent, scoped to the caller.
  let key: HeldKey | undefined;
  /** Whether this attempt took a dead claim over (it recovers a stalled or dead attempt's payment). */
  let tookOver = false;
  /** Layer 2's own claim that this attempt took over: an earlier attempt of this intent, maybe in doubt. */
  let keySeen: RequestKeyClaim | undefined;
  if (!layers.requestKey) {
    lane.mark('requestKey', 'off');
  } else {
    const name = keyName;
    const claim = { owner: attemptId, fingerprint };
    const ttlSeconds = options.resultTtlSeconds;
    const decision = await claimRequestKey(name, claim, { now: now(), leaseMs, ttlSeconds });
    switch (decision.kind) {
      case 'claimed':
        lane.mark('requestKey', 'claimed', reason('keyClaimed', { ...keyShown, fence: decision.fence, leaseMs }));
        key = { name, fingerprint, owner: attemptId, fence: decision.fence };
        break;
      case 'replay':
      case 'mismatch':
        return answerFromKey(decision, lane, keyShown);
      case 'in_progress': {
        // The claim's holder may be dead (its instance was killed) while the database knows the outcome,
        // or can learn it from the bank (the reconciler). Where a database layer is on, ask before "wait".
        const settled =
          (layers.stateMachine || layers.uniqueConstraint) && decision.owner
            ? await reconcileOrder(orderNo, { leaseMs, now, at, publish: options.publish })
            : undefined;
        if (settled?.kind === 'settled' && decision.owner) {
          // The key's own claim paid (its holder died before storing the outcome): this intent's payment.
          const outcome = settled.outcome;
          await completeRequestKey(name, decision.owner, { fingerprint, outcome, existing: false }, ttlSeconds);
          lane.mark('requestKey', 'stopped', reason('keyAlreadySettled', { ...keyShown, status: outcome.status }));
          return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: false };
        }
        lane.mark('requestKey', 'stopped', reason('keyStillProcessing', keyShown));
        return { kind: 'in_progress', answeredBy: 'requestKey' };
      }
      case 'abandoned': {
        // The first request stalled or died past its lease, or its outcome is unknown: take its claim over.
        const fence = await takeOverRequestKey(name, decision.claim, claim, { now: now(), ttlSeconds });
        if (fence === undefined) {
          lane.mark('requestKey', 'stopped', reason('keyTakenByAnother', keyShown));
          return { kind: 'in_progress', answeredBy: 'requestKey' };
        }
        key = { name, fingerprint, owner: attemptId, fence };
        tookOver = true;
        keySeen = decision.claim;
        lane.mark(
          'requestKey',
          'takeover',
          reason('keyTakeover', {
            ...keyShown,
            why: decision.claim.unknown ? 'unknown' : 'lease',
            oldFence: decision.claim.fence,
            fence,
          }),
        );
        // With layer 3 or 4 on, the database decides below. Alone, layer 2 asks the bank itself.
        if (!layers.stateMachine && !layers.uniqueConstraint) {
          const recovered = await recoverRequestKey(key, decision.claim, { orderNo, layers, options, lane });
          if (recovered) return recovered;
        }
        break;
      }
    }
  }

  // From here on this request holds the key (when layer 2 is on). Every way out completes the key with
  // a final outcome, keeps it (unknown), or releases it (nothing moved).
  const releaseKey = async () => {
    if (key && (await releaseRequestKey(key.name, key.owner)))
      lane.mark('requestKey', 'released', reason('keyReleased'));
  };
  // Before the bank, this attempt may stop without paying. A key it took over from an earlier attempt of
  // the same intent may still be that attempt's charge in doubt: it goes back to "unknown", never away.
  const letGoOfKey = async () => {
    if (!key || !keySeen) return releaseKey();
    if (await markRequestKeyUnknown(key, keySeen.unknownSince ?? now(), options.resultTtlSeconds)) {
      lane.mark('requestKey', 'unknown', reason('keyKeptUnknown'));
    }
  };

  if (request.amountCents !== undefined && request.amountCents !== amountCents) {
    await letGoOfKey();
    return { kind: 'amount_mismatch', orderAmountCents: amountCents };
  }

  // 3 + 4. Claim the order in one statement: the state machine's conditional update and the dedup row.
  let claim: Claimed;
  try {
    claim = await claimInDatabase(orderNo, attemptId, layers, { leaseMs, options, lane });
  } catch (error) {
    await letGoOfKey().catch(() => {});
    throw error;
  }
  if (claim.kind === 'answered') {
    // A duplicate: the first request's outcome is this intent's outcome too; "in progress" is not. Found
    // under a key this attempt took over, it is the intent's own payment, settled meanwhile: a replay.
    if (claim.result.kind === 'duplicate' && keySeen) claim.result.existing = false;
    if (key && claim.result.kind === 'duplicate') {
      const { outcome, existing } = claim.result;
      await completeRequestKey(
        key.name,
        key.owner,
        { fingerprint: key.fingerprint, outcome, existing },
        options.resultTtlSeconds,
      );
    } else {
      await letGoOfKey();
    }
    return claim.result;
  }
  const hold = claim.kind === 'held' ? claim.hold : undefined;
  if (claim.kind === 'held' && claim.tookOver) tookOver = true;
  const claimedAt = now();
  // The fencing token the bank checks: the order's claim when layer 3 or 4 holds it, else the key's.
  const fence: Fence | undefined = hold
    ? { lock: orderLock(orderNo), token: hold.fence }
    : key
      ? { lock: requestKeyLock(key.name), token: key.fence }
      : undefined;

  // The lab's faults between the claim and the bank: a pause (a GC pause, an overloaded host), or a crash.
  // The pause strikes an attempt that claimed the order, not one recovering it from a stalled attempt.
  const stallMs = tookOver ? 0 : faults.stallBeforeBankMs;
  if (stallMs > 0) {
    lane.mark('request', 'stalled', reason('stalled', { stallMs, leaseMs }));
    lane.flush();
    await new Promise((resolve) => setTimeout(resolve, stallMs));
  }
  if (faults.crashBeforeCharge) options.crash();
  await at?.('pay.beforeBank');

  // An attempt that paused for half its lease renews its claims, and stops if it lost one (it was taken
  // over). A fresh one cannot have lost them. Either way the bank checks the token: this is only early.
  if (now() - claimedAt > leaseMs / 2 || stallMs > 0) {
    const renewedAt = now();
    const held =
      (!hold || (await renewClaim(hold, layers, new Date(renewedAt)))) &&
      (!key || (await renewRequestKey(key, renewedAt)));
    if (!held) {
      lane.mark(
        hold ? (layers.stateMachine ? 'stateMachine' : 'uniqueConstraint') : 'requestKey',
        'lost',
        reason('claimLost'),
      );
      await releaseKey();
      return { kind: 'in_progress', answeredBy: answererOf(layers) };
    }
  }
  await at?.('pay.bank');

  // 5 + 6. The bank, with the bank's key (layer 5) and the claim's fencing token. Which failures release
  // the claims is the article's third detail.
  const bankKey = layers.bankKey ? bankKeyFor(orderNo) : undefined;
  lane.mark('bankKey', bankKey ? 'sent' : 'off', bankKey ? reason('bankKeySent', { key: bankKey }) : undefined);
  if (faults.bankLatencyMs > 0) lane.flush(); // the lab shows this request waiting at a slow bank
  let outcome: PaymentOutcome;
  let replayed = false;
  try {
    const charge = await chargeCard({ merchantRef: orderNo, amountCents, idempotencyKey: bankKey, fence }, faults, now);
    replayed = charge.replayed;
    if (replayed) lane.mark('bankKey', 'stopped', reason('bankReplayed', { charge: charge.id }));
    else lane.mark('bank', 'charged', reason('bankCharged', { charge: charge.id, fence: fence?.token ?? 'none' }));
    outcome = outcomeFromCharge(orderNo, charge);
  } catch (error) {
    if (error instanceof BankDeclinedError) {
      lane.mark('bank', 'declined', declineReason(error.reason));
      outcome = { status: 'DECLINED', orderNo, amountCents, reason: error.reason };
    } else if (error instanceof BankUnavailableError) {
      // Failed before any money moved: release everything, so the customer may simply try again.
      lane.mark('bank', 'failed', reason('bankFailed'));
      if (hold) await releaseClaim(hold);
      await releaseKey();
      return { kind: 'failed_retryable', reason: 'The bank could not be reached. Nothing was charged.' };
    } else if (error instanceof BankFencedError) {
      // The bank refused a stale token: another attempt holds the claim now. Nothing moved by this one.
      lane.mark('bank', 'fenced', reason('bankFenced', { fence: error.fence.token }));
      await releaseKey();
      return { kind: 'in_progress', answeredBy: answererOf(layers) };
    } else {
      // A timeout, a key still in use at the bank, or any fault we cannot read: the card may have been
      // charged. Ask the bank at once, under this attempt's own fence: a charge it has is the outcome, and
      // this request answers with it (docs/decisions/014-answers-in-doubt.md). No charge (yet): keep every
      // claim, so no retry can charge again, and let reconciliation ask again.
      lane.mark(error instanceof BankKeyInUseError ? 'bankKey' : 'bank', 'unknown', unknownReason(error));
      await at?.('pay.confirm');
      const confirmed =
        error instanceof BankTimeoutError && fence
          ? await askBank({ merchantRef: orderNo, fence, byLock: !hold }, now).then(
              (answer) => answer.charges[0],
              () => undefined,
            )
          : undefined;
      if (!confirmed) {
        lane.mark('bank', 'unknown', reason('bankNoChargeYet'));
        const since = now();
        if (hold) await keepClaimUnknown(hold, new Date(since)).catch(() => {});
        if (key) await markRequestKeyUnknown(key, since, options.resultTtlSeconds).catch(() => false);
        return { kind: 'in_progress', answeredBy: 'bank' };
      }
      lane.mark('bank', 'confirmed', reason('bankConfirmed', { charge: confirmed.id }));
      outcome = outcomeFromCharge(orderNo, confirmed);
    }
  }

  // The lab's "crash after charge": the process dies here, having charged the card and recorded nothing.
  if (faults.crashAfterCharge) options.crash();
  await at?.('pay.afterBank');

  // 7. Record the outcome. A failure here happens after the money moved: never release anything. The
  // reconciler settles the order from the bank; the customer still gets the outcome we know.
  await recordOutcome(outcome, hold, layers).then(
    (recorded) => {
      if (!recorded) lane.mark('outcome', 'late', reason('outcomeLate'));
    },
    (error: Error) => console.error(`[pay] ${orderNo}: outcome not recorded (${error.message}); reconciliation will`),
  );
  if (key) {
    const done = { fingerprint: key.fingerprint, outcome, existing: replayed };
    await completeRequestKey(key.name, key.owner, done, options.resultTtlSeconds).then(
      (stored) => lane.mark('requestKey', stored ? 'completed' : 'late', reason(stored ? 'keyCompleted' : 'keyLate')),
      (error: Error) => console.error(`[pay] ${orderNo}: outcome not stored in Redis (${error.message})`),
    );
  }
  return replayed
    ? { kind: 'duplicate', outcome, answeredBy: 'bankKey', existing: true }
    : { kind: 'completed', outcome };
}

/** What layer 2 answers from a key that already holds something: its first outcome, or a mismatch. */
function answerFromKey(decision: ClaimDecision, lane: Lane, keyShown: KeyShown): Result {
  switch (decision.kind) {
    case 'replay': {
      const outcome = parseOutcome(decision.outcome);
      if (!outcome) break;
      lane.mark('requestKey', 'stopped', reason('keyReplayed', { ...keyShown, status: outcome.status }));
      return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: decision.existing };
    }
    case 'mismatch':
      lane.mark('requestKey', 'stopped', reason('keyMismatch', { ...keyShown, usedOn: decision.usedOn || 'none' }));
      return { kind: 'mismatch', usedOn: decision.usedOn };
    default:
      lane.mark('requestKey', 'stopped', reason('keyStillProcessing', keyShown));
      return { kind: 'in_progress', answeredBy: 'requestKey' };
  }
  lane.mark('requestKey', 'stopped', reason('keyUnreadable', keyShown));
  return { kind: 'in_progress', answeredBy: 'requestKey' };
}

/** The switches a request ran under, as the room's view counts them ("defences on: 0 1 2 3 4 5"): "0 1 2", "none". */
function defencesOn(layers: Layers): string {
  const on = (['pendingUi', ...LAYERS] as const).flatMap((layer, number) => (layers[layer] ? [number] : []));
  return on.length > 0 ? on.join(' ') : 'none';
}

/** Layer 2's key as a step's reason names it (timeline.json `key…` reasons). */
type KeyShown = { key: string; strategy: string };

/** The bank's word for a declined card, as a reason (the simulated bank has one). */
function declineReason(why: string): TimelineReason {
  return why === 'insufficient funds' ? reason('bankDeclinedFunds') : reason('bankDeclined', { reason: why });
}

/** Why the bank's answer is unknown: its error's message, in words the lab can translate. */
function unknownReason(error: unknown): TimelineReason {
  if (error instanceof BankTimeoutError) {
    return error.afterMs > 0 ? reason('bankTimeout', { ms: error.afterMs }) : reason('bankAnswerLost');
  }
  if (error instanceof BankKeyInUseError) return reason('bankKeyInUse', { key: error.idempotencyKey });
  return error instanceof Error ? reason('bankError', { message: error.message }) : reason('bankCallFailed');
}

/** Who answers "in progress" for an attempt that lost its claim: the layer that held it. */
function answererOf(layers: Layers): Answerer {
  return layers.stateMachine ? 'stateMachine' : layers.uniqueConstraint ? 'uniqueConstraint' : 'requestKey';
}

type Claimed =
  /** Layers 3 and 4 are off: nothing to hold. */
  | { kind: 'off' }
  /** This attempt holds the order (it claimed it, or took a dead claim over). */
  | { kind: 'held'; hold: Hold; tookOver: boolean }
  /** A duplicate: the answer it gets. */
  | { kind: 'answered'; result: Result };

/** Layers 3 and 4 claim the order; a duplicate gets the first outcome, "in progress", or a dead claim. */
async function claimInDatabase(
  orderNo: string,
  attemptId: string,
  layers: Layers,
  context: { leaseMs: number; options: PayOptions; lane: Lane },
): Promise<Claimed> {
  const { lane, options } = context;
  if (!layers.stateMachine) lane.mark('stateMachine', 'off');
  if (!layers.uniqueConstraint) lane.mark('uniqueConstraint', 'off');
  if (!layers.stateMachine && !layers.uniqueConstraint) return { kind: 'off' };

  for (let tries = 0; ; tries++) {
    const db = getDb();
    const at = new Date(options.now());
    let layer: Layer;
    try {
      const fence = layers.stateMachine
        ? layers.uniqueConstraint
          ? // Both in one statement: the claim and the dedup row commit together, or neither does.
            await claimOrderWithDedupRow(db, orderNo, attemptId, at)
          : await claimOrder(db, orderNo, attemptId, at)
        : await insertPaymentDedupRow(db, orderNo, attemptId, at);
      if (fence !== undefined) {
        if (layers.stateMachine) lane.mark('stateMachine', 'claimed', reason('dbClaimed', { fence }));
        if (layers.uniqueConstraint)
          lane.mark('uniqueConstraint', 'inserted', reason('dedupInserted', { orderNo, fence }));
        return { kind: 'held', hold: { orderNo, attemptId, fence }, tookOver: false };
      }
      layer = 'stateMachine';
    } catch (error) {
      if (!(error instanceof DuplicateRecordError)) throw error;
      layer = 'uniqueConstraint';
    }

    // A duplicate. The first outcome if there is one; a dead claim is taken over by this request, which
    // pays once the bank has said nothing can be charged twice (reconcile.ts).
    const answer = await reconcileOrder(orderNo, {
      leaseMs: context.leaseMs,
      payer: { attemptId, bankKey: layers.bankKey },
      now: options.now,
      at: options.at,
      publish: options.publish,
    });
    // What the statement said (the reasons' "0 rows", "unique violation (P2002)"): the layer that said it.
    switch (answer.kind) {
      case 'settled':
        lane.mark(
          layer,
          'stopped',
          reason('dbSettled', { layer, found: answer.found ? 'yes' : 'no', status: answer.outcome.status }),
        );
        // Found by the reconciler: the dead claim's own charge, answered as its replay. Else the order was
        // already settled, by another intent as far as this request can tell.
        return {
          kind: 'answered',
          result: {
            kind: 'duplicate',
            outcome: answer.outcome,
            answeredBy: answer.found ? 'reconciler' : layer,
            existing: !answer.found,
          },
        };
      case 'resumed':
        lane.mark(layer, 'takeover', reason('dbTakeover', { layer, fence: answer.hold.fence }));
        return { kind: 'held', hold: answer.hold, tookOver: true };
      case 'waiting':
        lane.mark(layer, 'stopped', reason('dbConfirming', { layer }));
        return {
          kind: 'answered',
          result: {
            kind: 'in_progress',
            answeredBy: 'reconciler',
          },
        };
      case 'idle':
      case 'released':
        // The claim went away between this attempt's claim and its read (its holder released it): once more.
        if (tries === 0) continue;
        break;
      case 'running':
        break;
    }
    lane.mark(layer, 'stopped', reason('dbStillProcessing', { layer }));
    return { kind: 'answered', result: { kind: 'in_progress', answeredBy: layer } };
  }
}

/**
 * Layer 2 alone, having taken an abandoned claim over: the key is the only claim, so the pipeline asks
 * the bank itself, under the key's new token, about the charges made under this key. A charge: the
 * intent is paid (the answer for this retry). Nothing, and nothing can land (or the bank's key will
 * return what does): undefined, the pipeline goes on to pay. No charge yet: the claim stays in doubt.
 */
async function recoverRequestKey(
  key: HeldKey,
  seen: RequestKeyClaim,
  context: { orderNo: string; layers: Layers; options: PayOptions; lane: Lane },
): Promise<Result | undefined> {
  const { orderNo, options, lane } = context;
  const { verdict, askedAt } = await askBankAfterTakeover(
    { merchantRef: orderNo, fence: { lock: requestKeyLock(key.name), token: key.fence }, byLock: true },
    seen,
    options,
  );
  if (verdict.kind === 'charged') {
    const outcome = outcomeFromCharge(orderNo, verdict.charge);
    await recordOutcome(outcome, undefined, context.layers);
    const done = { fingerprint: key.fingerprint, outcome, existing: false };
    await completeRequestKey(key.name, key.owner, done, options.resultTtlSeconds);
    lane.mark('requestKey', 'stopped', reason('keyBankHasCharge', { charge: verdict.charge.id }));
    return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: false };
  }
  if (verdict.kind === 'nothing' || context.layers.bankKey) {
    lane.mark('requestKey', 'resumed', reason('keyResumed'));
    return undefined;
  }
  await markRequestKeyUnknown(key, seen.unknownSince ?? askedAt, options.resultTtlSeconds);
  lane.mark('requestKey', 'stopped', reason('keyMayLand'));
  return {
    kind: 'in_progress',
    answeredBy: 'requestKey',
  };
}

function summarize(result: Result): TimelineReason {
  switch (result.kind) {
    case 'completed':
      return reason('outcomeCompleted', { status: result.outcome.status });
    case 'duplicate':
      return reason('outcomeDuplicate', { status: result.outcome.status, answeredBy: result.answeredBy });
    case 'in_progress':
      return reason('outcomeInProgress', { answeredBy: result.answeredBy });
    case 'already_submitted':
      return reason('outcomeAlreadySubmitted');
    case 'mismatch':
      return reason('outcomeMismatch');
    case 'failed_retryable':
      return reason('outcomeFailedRetryable');
    case 'order_not_found':
      return reason('outcomeNoOrder');
    case 'amount_mismatch':
      return reason('outcomeAmountMismatch', { cents: result.orderAmountCents });
  }
}
