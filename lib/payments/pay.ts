import 'server-only';
import { getDb } from '../db.ts';
// The payment pipeline: one request, top to bottom, through the enabled defences in the article's order,
// then the bank, then the outcome. Used by the checkout page (server action) and by POST /api/payments.
//
//   1. one-time token      (browser only)   a double submit from the same page stops here
//   2. request key          Redis            retries of the same intent get the first outcome
//   3. state machine        PostgreSQL       any duplicate for the order: the claim is a conditional update
//   4. unique constraint    PostgreSQL       the last millimetre, in the same transaction as 3
//   5. the bank             charges every call it receives
//   6. record the outcome   database first, then the request key; never released after a charge
//
// Which layers run, and which faults the bank injects, comes from the lab settings (global, or the
// order's own). A layer that is off is skipped, so the demo can show the duplicate it would have stopped.
import { checkoutTokenKey, consumeCheckoutToken } from '../defences/checkout-token.ts';
import { DuplicateRecordError, insertDedupRecord, readDedupRecord, releaseDedupRecord } from '../defences/dedup.ts';
import { claimOrder, claimOrderWithDedupRow, moveOrder } from '../defences/payment-state.ts';
import {
  claimRequestKey,
  completeRequestKey,
  markRequestKeyUnknown,
  releaseRequestKey,
} from '../defences/request-key.ts';
import { fingerprintOf, requestKeyName } from '../defences/request-key-record.ts';
import { env } from '../env.ts';
import { instanceName, newAttemptId } from '../instance.ts';
import type { Faults, LabSettings, Layer } from '../lab/settings.ts';
import { getLabSettings, settingsForOrder } from '../lab/settings-store.ts';
import { type Lane, startLane } from '../lab/timeline.ts';
import type { TimelineEvent } from '../lab/timeline-event.ts';
import type { CallerScope } from '../session.ts';
import { BankDeclinedError, BankTimeoutError, BankUnavailableError, chargeCard, listCharges } from './bank.ts';
import { outcomeFromCharge, outcomeFromOrder, type PaymentOutcome, parseOutcome } from './outcome.ts';
import type { RaceHook } from './race-points.ts';
import { reconcileOrder } from './reconcile.ts';
import { recordOutcome } from './record-outcome.ts';

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
};

/** Who gave the answer: a defence layer, the bank, or the reconciler it called. */
export type Answerer = Layer | 'bank' | 'reconciler';

export type PayResult = {
  requestId: string;
} /** This request ran the payment: the bank charged (or declined) the card. */ & (
  | { kind: 'completed'; outcome: PaymentOutcome }
  /** A duplicate, answered with the first request's outcome. */
  | { kind: 'duplicate'; outcome: PaymentOutcome; answeredBy: Answerer }
  /** The first request is still running, or its outcome is being confirmed with the bank. */
  | { kind: 'in_progress'; answeredBy: Answerer; retryAfterSeconds: number }
  /** Layer 1: this page's token was already used, has expired, or is not this session's. */
  | { kind: 'already_submitted' }
  /** Layer 2: the key was used before with a different payload. */
  | { kind: 'mismatch' }
  /** The bank failed before charging; nothing moved and every claim was released: try again. */
  | { kind: 'failed_retryable'; reason: string }
  | { kind: 'order_not_found' }
  | { kind: 'amount_mismatch'; orderAmountCents: number }
);

type Result = PayResult extends infer R ? (R extends { requestId: string } ? Omit<R, 'requestId'> : never) : never;

export type PayOptions = {
  /** How long a claim (layer 2 key, layer 3 PROCESSING) may live before it counts as abandoned. */
  leaseMs: number;
  /** How long layer 2 keeps a final outcome. */
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
    leaseMs: env().REQUEST_KEY_LEASE_MS,
    resultTtlSeconds: env().REQUEST_KEY_RESULT_TTL_SECONDS,
    crash: () => {
      process.kill(process.pid, 'SIGKILL');
      throw new Error('unreachable: the process was killed');
    },
    now: Date.now,
  };
}

/** Thrown inside the claim transaction when layer 3's conditional update changed no row. */
class OrderAlreadyClaimed extends Error {}

export async function pay(request: PayRequest, options: PayOptions = defaultPayOptions()): Promise<PayResult> {
  const lane = startLane(
    { orderNo: request.orderNo, channel: request.channel, instance: instanceName() },
    options.publish,
  );
  const result = await runPipeline(request, options, lane);
  lane.mark('outcome', result.kind, summarize(result));
  lane.flush();
  return { requestId: lane.requestId, ...result } as PayResult;
}

async function runPipeline(request: PayRequest, options: PayOptions, lane: Lane): Promise<Result> {
  const { orderNo, caller } = request;
  const db = getDb();

  // 0. The order, and the lab settings that apply to it (the order's own win over the global ones).
  const [order, globalSettings] = await Promise.all([
    // Raw SQL on the hot path: the model query costs Prisma a query compilation per call (bench/results.md).
    db.$queryRaw<Array<{ amountCents: number; lab: unknown }>>`
      SELECT amount_cents AS "amountCents", lab FROM orders WHERE order_no = ${orderNo}`.then((rows) => rows[0]),
    getLabSettings(),
  ]);
  if (!order) return { kind: 'order_not_found' };
  const settings = settingsForOrder(globalSettings, order.lab);
  const { layers } = settings;
  const faults = { ...settings.faults, ...options.faults };
  const amountCents = order.amountCents;
  const attemptId = newAttemptId();
  lane.mark('request', 'received', `${request.channel} request for ${amountCents} cents`);

  // 1. One-time token: only the request that deletes the page's token may go on.
  if (request.channel === 'browser' || request.checkoutToken !== undefined) {
    if (!layers.token) {
      lane.mark('token', 'off');
    } else {
      const consumed = request.checkoutToken
        ? await consumeCheckoutToken(orderNo, caller, request.checkoutToken)
        : false;
      if (!consumed) {
        lane.mark('token', 'stopped', 'this page was already submitted, or its token expired or is not this session’s');
        return { kind: 'already_submitted' };
      }
      lane.mark('token', 'passed', `consumed ${checkoutTokenKey(orderNo, caller).split(':').slice(0, 3).join(':')}:…`);
    }
  }

  await options.at?.('pay.claim');
  // 2. Request key: the business identity of the intent, scoped to the caller.
  let key: { name: string; fingerprint: string } | undefined;
  if (!layers.requestKey) {
    lane.mark('requestKey', 'off');
  } else {
    const name = requestKeyName(caller, request.idempotencyKey ?? `order:${orderNo}`);
    // The payload as the caller sent it: the same key with another amount is a mismatch, not a retry.
    const fingerprint = fingerprintOf({ orderNo, amountCents: request.amountCents ?? amountCents });
    const decision = await claimRequestKey(name, { owner: attemptId, fingerprint }, options.leaseMs);
    switch (decision.kind) {
      case 'claimed':
        lane.mark('requestKey', 'claimed', `SET NX PX ${options.leaseMs} ms`);
        key = { name, fingerprint };
        break;
      case 'replay': {
        const outcome = parseOutcome(decision.outcome);
        if (outcome) {
          lane.mark('requestKey', 'stopped', `replayed the stored outcome (${outcome.status})`);
          return { kind: 'duplicate', outcome, answeredBy: 'requestKey' };
        }
        lane.mark('requestKey', 'stopped', 'a stored outcome could not be read');
        return { kind: 'in_progress', answeredBy: 'requestKey', retryAfterSeconds: 1 };
      }
      case 'in_progress': {
        // The claim's owner may be dead (its instance was killed) while the database already knows the
        // outcome (the reconciler settled it). Where a database layer is on, ask it before saying "wait".
        const layer = layers.stateMachine ? 'stateMachine' : layers.uniqueConstraint ? 'uniqueConstraint' : undefined;
        const answer = layer && decision.owner ? await answerDuplicate(orderNo, layer, options) : undefined;
        if (answer?.kind === 'settled' && decision.owner) {
          await completeRequestKey(
            name,
            decision.owner,
            { fingerprint, outcome: answer.outcome },
            options.resultTtlSeconds,
          );
          lane.mark(
            'requestKey',
            'stopped',
            `its claim is still open, but the order is already ${answer.outcome.status}`,
          );
          return { kind: 'duplicate', outcome: answer.outcome, answeredBy: 'requestKey' };
        }
        lane.mark('requestKey', 'stopped', 'the first request is still processing');
        return { kind: 'in_progress', answeredBy: 'requestKey', retryAfterSeconds: 1 };
      }
      case 'mismatch':
        lane.mark('requestKey', 'stopped', 'this key was used with a different payload');
        return { kind: 'mismatch' };
      case 'unknown': {
        // The first request's bank call timed out. Ask the bank (through the reconciler), not a guess.
        const settled = await reconcileOrder(orderNo, { leaseMs: options.leaseMs, now: options.now, at: options.at });
        if (settled.kind === 'settled') {
          await completeRequestKey(
            name,
            decision.owner,
            { fingerprint, outcome: settled.outcome },
            options.resultTtlSeconds,
          );
          lane.mark('requestKey', 'stopped', `outcome confirmed with the bank (${settled.outcome.status})`);
          return { kind: 'duplicate', outcome: settled.outcome, answeredBy: 'reconciler' };
        }
        // Nothing for the reconciler to settle ('idle': another reconciler run already released the claim,
        // or layers 3-4 are off and there was none): the key is the last claim left, so ask the bank here.
        const charge = settled.kind === 'idle' ? (await listCharges(orderNo, options.now))[0] : undefined;
        if (charge) {
          const outcome = outcomeFromCharge(orderNo, charge);
          await completeRequestKey(name, decision.owner, { fingerprint, outcome }, options.resultTtlSeconds);
          lane.mark('requestKey', 'stopped', `the bank has charge ${charge.id}`);
          return { kind: 'duplicate', outcome, answeredBy: 'reconciler' };
        }
        if (settled.kind === 'released' || settled.kind === 'idle') {
          // The bank has no charge: nothing moved, so the key is given back and the retry may pay.
          await releaseRequestKey(name, decision.owner);
          lane.mark('requestKey', 'released', 'the bank has no charge: the key is free again, retry');
          return { kind: 'in_progress', answeredBy: 'reconciler', retryAfterSeconds: 1 };
        }
        lane.mark('requestKey', 'stopped', 'the first request’s outcome is still being confirmed with the bank');
        return { kind: 'in_progress', answeredBy: 'requestKey', retryAfterSeconds: 2 };
      }
    }
  }

  // From here on this request holds the key (when layer 2 is on). Every way out completes the key with
  // a final outcome, keeps it (unknown), or releases it (nothing moved).
  const releaseKey = async () => {
    if (key && (await releaseRequestKey(key.name, attemptId))) lane.mark('requestKey', 'released', 'nothing moved');
  };

  if (request.amountCents !== undefined && request.amountCents !== amountCents) {
    await releaseKey();
    return { kind: 'amount_mismatch', orderAmountCents: amountCents };
  }

  // 3 + 4. Claim the order in one transaction: the state machine's conditional update and the dedup row.
  let claim: Result | undefined;
  const claimedAt = options.now();
  try {
    claim = await claimInDatabase(orderNo, attemptId, layers, options, lane);
  } catch (error) {
    await releaseKey().catch(() => {});
    throw error;
  }
  if (claim) {
    // A duplicate: the first request's outcome is this intent's outcome too; "in progress" is not.
    if (key && claim.kind === 'duplicate') {
      await completeRequestKey(
        key.name,
        attemptId,
        { fingerprint: key.fingerprint, outcome: claim.outcome },
        options.resultTtlSeconds,
      );
    } else {
      await releaseKey();
    }
    return claim;
  }

  // Fencing: a claim counts as abandoned once it is older than the lease, and the reconciler may then
  // release it and let another attempt pay. An attempt that stalled that long (a pause, an overloaded
  // host) checks that its claim is still its own before it touches the bank; a fresh one cannot have lost it.
  // The lab's faults between the claim and the bank: a pause (a GC pause, an overloaded host), or a crash.
  if (faults.stallBeforeBankMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.stallBeforeBankMs));
  if (faults.crashBeforeCharge) options.crash();
  await options.at?.('pay.beforeBank');
  if (
    options.now() - claimedAt > options.leaseMs / 2 &&
    !(await stillHoldsClaim(orderNo, attemptId, layers, options.now))
  ) {
    lane.mark('stateMachine', 'lost', 'this attempt stalled past its lease and another one took over');
    await releaseKey();
    return {
      kind: 'in_progress',
      answeredBy: layers.stateMachine ? 'stateMachine' : 'uniqueConstraint',
      retryAfterSeconds: 1,
    };
  }

  // 5. The bank. Which failures release the claims is the article's third detail.
  if (faults.bankLatencyMs > 0) lane.flush(); // the lab shows this request waiting at a slow bank
  let outcome: PaymentOutcome;
  try {
    await options.at?.('pay.bank');
    const charge = await chargeCard({ merchantRef: orderNo, amountCents }, faults, options.now);
    lane.mark('bank', 'charged', `charge ${charge.id}`);
    outcome = outcomeFromCharge(orderNo, charge);
  } catch (error) {
    if (error instanceof BankDeclinedError) {
      lane.mark('bank', 'declined', error.reason);
      outcome = { status: 'DECLINED', orderNo, amountCents, reason: error.reason };
    } else if (error instanceof BankUnavailableError) {
      // Failed before any money moved: release everything, so the customer may simply try again.
      lane.mark('bank', 'failed', 'the bank failed before charging');
      await releaseDatabaseClaim(orderNo, attemptId, layers);
      await releaseKey();
      return { kind: 'failed_retryable', reason: 'The bank could not be reached. Nothing was charged.' };
    } else {
      // A timeout, or any fault we cannot read: the card may have been charged. Keep every claim, so no
      // retry can charge again, and let reconciliation ask the bank.
      lane.mark('bank', 'unknown', error instanceof BankTimeoutError ? error.message : 'the bank call failed');
      await keepAsUnknown(orderNo, attemptId, layers, key, options);
      return { kind: 'in_progress', answeredBy: 'bank', retryAfterSeconds: 2 };
    }
  }

  // The lab's "crash after charge": the process dies here, having charged the card and recorded nothing.
  if (faults.crashAfterCharge) options.crash();
  await options.at?.('pay.afterBank');

  // 6. Record the outcome. A failure here happens after the money moved: never release anything. The
  // reconciler settles the order from the bank; the customer still gets the outcome we know.
  try {
    await recordOutcome(outcome, attemptId, layers);
  } catch (error) {
    console.error(`[pay] ${orderNo}: outcome not recorded (${(error as Error).message}); reconciliation will`);
  }
  if (key) {
    await completeRequestKey(
      key.name,
      attemptId,
      { fingerprint: key.fingerprint, outcome },
      options.resultTtlSeconds,
    ).then(
      (stored) =>
        lane.mark(
          'requestKey',
          stored ? 'completed' : 'late',
          stored ? 'outcome stored for 24 h' : 'another attempt owns the key',
        ),
      (error: Error) => console.error(`[pay] ${orderNo}: outcome not stored in Redis (${error.message})`),
    );
  }
  return { kind: 'completed', outcome };
}

/** Layers 3 and 4 claim the order; undefined when this request won, else the answer for the duplicate. */
async function claimInDatabase(
  orderNo: string,
  attemptId: string,
  layers: LabSettings['layers'],
  options: PayOptions,
  lane: Lane,
): Promise<Result | undefined> {
  if (!layers.stateMachine) lane.mark('stateMachine', 'off');
  if (!layers.uniqueConstraint) lane.mark('uniqueConstraint', 'off');
  if (!layers.stateMachine && !layers.uniqueConstraint) return undefined;

  // A claim left by a dead attempt is settled by the reconciler, and then this request tries once more.
  for (let tries = 0; ; tries++) {
    try {
      const db = getDb();
      if (layers.stateMachine && layers.uniqueConstraint) {
        // Both in one statement: the claim and the dedup row commit together, or neither does.
        if (!(await claimOrderWithDedupRow(db, orderNo, attemptId, new Date(options.now()))))
          throw new OrderAlreadyClaimed();
      } else if (layers.stateMachine) {
        if (!(await claimOrder(db, orderNo, attemptId, new Date(options.now())))) throw new OrderAlreadyClaimed();
      } else {
        await insertDedupRecord(db, 'PAYMENT', orderNo, attemptId);
      }
      if (layers.stateMachine) lane.mark('stateMachine', 'claimed', 'PENDING → PROCESSING (1 row)');
      if (layers.uniqueConstraint) lane.mark('uniqueConstraint', 'inserted', `(PAYMENT, ${orderNo})`);
      return undefined;
    } catch (error) {
      const layer: Layer | undefined =
        error instanceof OrderAlreadyClaimed
          ? 'stateMachine'
          : error instanceof DuplicateRecordError
            ? 'uniqueConstraint'
            : undefined;
      if (!layer) throw error;
      const answer = await answerDuplicate(orderNo, layer, options);
      if (answer.kind === 'released' && tries === 0) continue;
      const result: Result =
        answer.kind === 'settled'
          ? { kind: 'duplicate', outcome: answer.outcome, answeredBy: layer }
          : { kind: 'in_progress', answeredBy: layer, retryAfterSeconds: 1 };
      lane.mark(
        layer,
        'stopped',
        layer === 'stateMachine' ? `0 rows: ${answer.detail}` : `unique violation (P2002): ${answer.detail}`,
      );
      return result;
    }
  }
}

/** What a duplicate stopped by layer 3 or 4 should answer: the first outcome if there is one. */
async function answerDuplicate(
  orderNo: string,
  layer: Layer,
  options: PayOptions,
): Promise<
  { kind: 'settled'; outcome: PaymentOutcome; detail: string } | { kind: 'released' | 'running'; detail: string }
> {
  const db = getDb();
  // Layer 3 reads the order's current state; layer 4 reads the outcome stored on the dedup row.
  const stored =
    layer === 'stateMachine'
      ? await db.order
          .findUnique({
            where: { orderNo },
            select: {
              orderNo: true,
              amountCents: true,
              status: true,
              chargeId: true,
              paidAt: true,
              declineReason: true,
            },
          })
          .then((order) => (order ? outcomeFromOrder(order) : undefined))
      : await readDedupRecord(db, 'PAYMENT', orderNo).then((row) => parseOutcome(row?.outcome));
  if (stored) return { kind: 'settled', outcome: stored, detail: `already ${stored.status}` };
  // No outcome yet: the first request is running, or died. Only a stale claim is touched.
  const reconciled = await reconcileOrder(orderNo, { leaseMs: options.leaseMs, now: options.now, at: options.at });
  if (reconciled.kind === 'settled') {
    return {
      kind: 'settled',
      outcome: reconciled.outcome,
      detail: `settled with the bank: ${reconciled.outcome.status}`,
    };
  }
  if (reconciled.kind === 'released') return { kind: 'released', detail: 'a dead claim was released' };
  return { kind: 'running', detail: 'the first request is still processing' };
}

/** Whether this attempt still holds its database claim (and, for layer 3, renews it). */
async function stillHoldsClaim(
  orderNo: string,
  attemptId: string,
  layers: LabSettings['layers'],
  now: () => number,
): Promise<boolean> {
  const db = getDb();
  if (layers.stateMachine) {
    const { count } = await db.order.updateMany({
      where: { orderNo, attemptId, status: 'PROCESSING' },
      data: { claimedAt: new Date(now()) },
    });
    return count === 1;
  }
  if (layers.uniqueConstraint) return (await readDedupRecord(db, 'PAYMENT', orderNo))?.owner === attemptId;
  return true;
}

/** Undoes the claim of an attempt that failed before any money moved. */
async function releaseDatabaseClaim(orderNo: string, attemptId: string, layers: LabSettings['layers']): Promise<void> {
  if (!layers.stateMachine && !layers.uniqueConstraint) return;
  await getDb().$transaction(async (tx) => {
    if (layers.stateMachine)
      await moveOrder(tx, orderNo, attemptId, 'failedBeforeCharge', { attemptId: null, claimedAt: null });
    if (layers.uniqueConstraint) await releaseDedupRecord(tx, 'PAYMENT', orderNo, attemptId);
  });
}

async function keepAsUnknown(
  orderNo: string,
  attemptId: string,
  layers: LabSettings['layers'],
  key: { name: string; fingerprint: string } | undefined,
  options: PayOptions,
): Promise<void> {
  // The dedup row stays without an outcome; the order says UNKNOWN; the key says unknown for a day.
  if (layers.stateMachine) await moveOrder(getDb(), orderNo, attemptId, 'timedOut').catch(() => false);
  if (key)
    await markRequestKeyUnknown(key.name, attemptId, key.fingerprint, options.resultTtlSeconds).catch(() => false);
}

function summarize(result: Result): string {
  switch (result.kind) {
    case 'completed':
      return `this request ${result.outcome.status === 'PAID' ? 'charged the card' : 'was declined'}`;
    case 'duplicate':
      return `duplicate: answered with the first outcome (${result.outcome.status}) by ${result.answeredBy}`;
    case 'in_progress':
      return `in progress (${result.answeredBy})`;
    case 'already_submitted':
      return 'already submitted';
    case 'mismatch':
      return 'key reused with a different payload';
    case 'failed_retryable':
      return 'failed before charging; claims released';
    case 'order_not_found':
      return 'no such order';
    case 'amount_mismatch':
      return `amount differs from the order's ${result.orderAmountCents} cents`;
  }
}
