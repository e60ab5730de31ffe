import 'server-only';
// Layer 2: the request key. A caller sends a key that stays the same across the retries of one intent
// (the order number for a checkout, the Idempotency-Key for an API call). The first request claims it
// (one Lua script: SET unless present, with a fencing token from Redis's clock); the final outcome is
// stored for 24 hours and replayed to every retry; a failure before any money moved releases the claim;
// an unknown outcome keeps it for reconciliation. Every write after the claim is checked against the
// owner id, so a late worker cannot undo a newer one, and a claim whose holder stalled or died past its
// lease is taken over by a compare-and-set that raises its token: the bank refuses the old one.
// Catches: client, gateway and queue retries. Misses: another caller paying the same order (another key);
// Redis and the database can disagree (Redis loses its memory): layers 3 and 4 hold then.
//
// What a duplicate stopped here gets (requestKeyDefence, at the end of this file):
//   - the key holds a final outcome: that outcome, exactly as first answered (a replay);
//   - the key is claimed by a live attempt: "in progress" (but where layer 3 or 4 is on and the holder may be
//     dead, the database is asked first: an outcome it knows is the answer, and is stored on the key);
//   - the same key with another payload, or on another endpoint: a mismatch;
//   - the claim is abandoned (stalled or dead past its lease, or its outcome unknown): no stop, this attempt
//     takes it over; alone (layers 3 and 4 off), it asks the bank itself what the dead claim charged.
// When the claim is given back (under the right release rule, noMoneyMoved; release.ts has the wrong ones):
// completed with the outcome once the bank has answered (or once a later layer found the first outcome), a
// failure after the charge too; released when nothing moved (the bank refused, or a later layer stopped this
// attempt); kept "unknown" when the bank's answer is unknown, or when this attempt stops before the bank
// holding a claim it took over from an attempt whose charge may still be in doubt. Never released after a charge.
// The rules are the same whatever the key guards: a payment (the order's, below) or a refund (lib/refunds makes a
// KeyedAttempt of its own attempt, with its endpoint, its reference at the bank and how to read its outcome).
import type { CallerScope } from '../../session.ts';
import { decide, reason, type Span } from '../../telemetry/spans.ts';
import {
  type Answer,
  type Attempt,
  type AttemptKey,
  type Defence,
  type Ending,
  type Intent,
  type KeyAnswer,
  type Lease,
  type LostClaim,
  type Next,
  stopped,
} from '../defence.ts';
import type { AfterBank, Charge, ClaimState, Fence } from '../fencing.ts';
import type { ReleaseRule } from '../layers.ts';
import { outcomeFromCharge, type PaymentOutcome, parseOutcome } from '../outcome.ts';
import type { RaceHook } from '../race-points.ts';
import { type ClaimFate, claimFate } from '../release.ts';
import { requestKeyFor, shortKey } from './key-strategy.ts';
import {
  type ClaimDecision,
  fingerprintOf,
  PAYMENTS_ENDPOINT,
  type RequestKeyClaim,
  requestKeyName,
} from './record.ts';
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
} from './store.ts';

// ---- Layer 2 as a defence ---------------------------------------------------------------------------------

export type { AttemptKey, KeyAnswer };

/** The key one request runs under: the lab's key strategy applied to what the request says about its intent. */
export function attemptKeyOf(
  caller: CallerScope,
  intent: Intent,
  payload: { orderNo: string; amountCents: number },
): AttemptKey {
  const key = requestKeyFor(intent.strategy, intent);
  return {
    name: requestKeyName(caller, key),
    fingerprint: fingerprintOf(payload),
    shown: { key: shortKey(key), strategy: intent.strategy },
  };
}

/**
 * An attempt as layer 2 sees it, whatever the key guards: its key, the operation the key is bound to, what the
 * bank knows it by, and what layer 2 may ask of the rest. `O`: its outcome; `Found`: what the bank may turn out
 * to have done under a claim taken over (a charge, a refund).
 */
export type KeyedAttempt<O, Found> = {
  caller: CallerScope;
  attemptId: string;
  key: AttemptKey;
  /** The operation the key is bound to: the same key on another is a mismatch. */
  endpoint: string;
  /** What the bank knows the intent by (the order number; a refund's reference). */
  merchantRef: string;
  leaseMs: number;
  release: ReleaseRule;
  resultTtlSeconds: number;
  now: () => number;
  at?: RaceHook;
  span: Span;
  recovery: {
    /** The database's reconciler, for a key held by an attempt that may be dead. */
    reconcile(): Promise<
      | { kind: 'settled'; outcome: O }
      | { kind: 'released' | 'resumed' | 'running' | 'waiting' | 'idle' | 'gone' | 'amountMismatch' }
    >;
    askBankAfterTakeover(
      query: { merchantRef: string; fence: Fence; byLock?: boolean },
      seen: ClaimState,
    ): Promise<{ verdict: AfterBank<Found>; askedAt: number }>;
  };
  /** What the bank did under the key means for the intent (a charge: paid; a refund: refunded). */
  outcomeOf(found: Found): O;
  /** A stored outcome read back, never trusted blindly. */
  parseOutcome(stored: unknown): O | undefined;
};

type Keyed = KeyedAttempt<unknown, unknown>;

/**
 * A payment's attempt with its key, made once per attempt (a key minted per submit must be the same wherever it
 * is asked for: layer 1 asks when a spent token names its intent). The payload is what the caller stated, or the
 * order's amount (a browser states none).
 */
function keyed(attempt: Attempt): KeyedAttempt<PaymentOutcome, Charge> {
  let key = keys.get(attempt.intent);
  if (!key) {
    const payload = { orderNo: attempt.orderNo, amountCents: attempt.statedAmountCents ?? attempt.amountCents };
    key = attemptKeyOf(attempt.caller, attempt.intent, payload);
    keys.set(attempt.intent, key);
  }
  // Written out, not `{ ...attempt, key, … }`: V8 copies a spread of an object this size and then adds to it at
  // about 5 µs of CPU (a literal of its fields: under 0.1 µs; decision 038).
  const { caller, attemptId, leaseMs, release, resultTtlSeconds, now, at, span, recovery, orderNo } = attempt;
  return {
    caller,
    attemptId,
    key,
    endpoint: PAYMENTS_ENDPOINT,
    merchantRef: orderNo,
    leaseMs,
    release,
    resultTtlSeconds,
    now,
    at,
    span,
    recovery,
    outcomeOf: (charge) => outcomeFromCharge(orderNo, charge),
    parseOutcome,
  };
}
const keys = new WeakMap<Intent, AttemptKey>();

/**
 * What layer 2 is told by the switches and by the defences beside it. `databaseDecides`: layer 3 or 4 is on,
 * so a claim found dead is settled by the database's claim, and a live-looking one is checked with the
 * reconciler before "in progress". `bankKey`: layer 5 is on, so after a takeover the bank's key returns
 * whatever charge may still land. `recordOnOrder`: how a charge found alone is written on the order (layers
 * 3 and 4 off: unguarded), given by whoever composes the defences.
 */
export type RequestKeyOptions<O = PaymentOutcome> = {
  databaseDecides: boolean;
  bankKey: boolean;
  /** How an outcome found alone is written (`merchantRef`: what the bank knows the intent by). */
  recordOnOrder: (outcome: O, merchantRef: string) => Promise<void>;
};

/** What layer 2's claim came to: the key held (`seen`: the abandoned claim it took over), or a duplicate's answer. */
type KeyClaim<O> = { kind: 'held'; fence: number; seen?: RequestKeyClaim } | { kind: 'stopped'; answer: KeyAnswer<O> };

/** Layer 2 as a payment's defence. */
export function requestKeyDefence(options: RequestKeyOptions): Defence {
  return keyDefence(options, keyed);
}

/**
 * Layer 2 as a defence of any intent: `keyedOf` says what the attempt is to layer 2. Its answers are layer 2's
 * (KeyAnswer), which every intent's answers include.
 */
export function keyDefence<At, A extends { kind: string }, O, Found>(
  options: RequestKeyOptions<O>,
  keyedOf: (attempt: At) => KeyedAttempt<O, Found>,
): Defence<At, A | KeyAnswer<O>, O> {
  return {
    layer: 'requestKey',
    guard: (asked, next) => guardKey(keyedOf(asked), options, next),
  };
}

async function guardKey<A extends { kind: string }, O, Found>(
  attempt: KeyedAttempt<O, Found>,
  options: RequestKeyOptions<O>,
  next: Next<A | KeyAnswer<O>, O>,
): Promise<Ending<A | KeyAnswer<O>, O>> {
  const claim = await claimKey(attempt, options);
  if (claim.kind === 'stopped') return stopped(claim.answer);
  const { fence, seen } = claim;
  const { key, attemptId: owner } = attempt;
  const firstFence = seen?.firstFence ?? fence;
  const endpoint = nonDefault(attempt.endpoint);
  const held: HeldKey = { name: key.name, fingerprint: key.fingerprint, endpoint, owner, fence, firstFence };
  const tookOver = seen !== undefined;
  const end = await next({ lease: leaseOf(attempt, held, tookOver) });
  // What becomes of the key is the release rule's (release.ts): completed, released, kept in doubt, left.
  const fate = claimFate(attempt.release, end, tookOver);
  if (end.kind === 'banked') {
    await settle(attempt, held, fate);
    return end;
  }
  const answer = stoppedAfter(attempt, held, seen, end.answer, fate);
  if (end.failure === undefined) return { ...end, answer: await answer };
  // A store inside failed (the pipeline throws its error once the guards have heard it): the key's own store may be
  // down too, and its error must not take the place of the first one. The key then lives out its lease.
  return {
    ...end,
    answer: await answer.catch((error: Error) => {
      console.error(`[request-key] ${attempt.merchantRef}: not given back (${error.message})`);
      return end.answer;
    }),
  };
}

async function claimKey<O, Found>(
  attempt: KeyedAttempt<O, Found>,
  options: RequestKeyOptions<O>,
): Promise<KeyClaim<O>> {
  const { key, span, attemptId, leaseMs, endpoint } = attempt;
  const claim = { owner: attemptId, fingerprint: key.fingerprint, endpoint: nonDefault(endpoint) };
  const ttlSeconds = attempt.resultTtlSeconds;
  if (attempt.at) await attempt.at('key.claim');
  const decision = await claimRequestKey(key.name, claim, { now: attempt.now(), leaseMs, ttlSeconds });
  switch (decision.kind) {
    case 'claimed':
      decide(span, 'requestKey', 'claimed', () =>
        reason('keyClaimed', { ...key.shown, fence: decision.fence, leaseMs }),
      );
      return { kind: 'held', fence: decision.fence };
    case 'replay':
    case 'mismatch':
      return { kind: 'stopped', answer: answerFromKey(decision, attempt) };
    case 'in_progress':
      return { kind: 'stopped', answer: await answerInProgress(attempt, decision.owner, options.databaseDecides) };
    case 'abandoned':
      return takeOver(attempt, decision.claim, options);
  }
}

/** The endpoint as a key's record stores it: a payment's is the default, left out (its records stay as they were). */
const nonDefault = (endpoint: string) => (endpoint === PAYMENTS_ENDPOINT ? undefined : endpoint);

/**
 * Whether the attempt's key already holds something final (its first outcome, or another payload): then how
 * layer 2 answers it, to be given once the asker has said why it asked. Layer 1 asks this of a spent token's
 * request that names its intent.
 */
export async function answerOfKey(asked: Attempt): Promise<(() => Answer) | undefined> {
  const attempt = keyed(asked);
  const known = await peekRequestKey(attempt.key.name, attempt.key.fingerprint, {
    now: attempt.now(),
    leaseMs: attempt.leaseMs,
  });
  return known ? () => answerFromKey(known, attempt) : undefined;
}

/** What layer 2 answers from a key that already holds something: its first outcome, or a mismatch. */
function answerFromKey<O, Found>(decision: ClaimDecision, attempt: KeyedAttempt<O, Found>): KeyAnswer<O> {
  const { span, key } = attempt;
  switch (decision.kind) {
    case 'replay': {
      const outcome = attempt.parseOutcome(decision.outcome);
      if (!outcome) break;
      decide(span, 'requestKey', 'stopped', () => reason('keyReplayed', { ...key.shown, status: statusOf(outcome) }));
      return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: decision.existing };
    }
    case 'mismatch':
      decide(span, 'requestKey', 'stopped', () =>
        reason('keyMismatch', { ...key.shown, usedOn: decision.usedOn || 'none' }),
      );
      return { kind: 'mismatch', usedOn: decision.usedOn };
    default:
      decide(span, 'requestKey', 'stopped', () => reason('keyStillProcessing', key.shown));
      return { kind: 'in_progress', answeredBy: 'requestKey' };
  }
  decide(span, 'requestKey', 'stopped', () => reason('keyUnreadable', key.shown));
  return { kind: 'in_progress', answeredBy: 'requestKey' };
}

/** An outcome's status, as a step names it (PAID, DECLINED; SUCCEEDED, FAILED). */
const statusOf = (outcome: unknown) => String((outcome as { status?: unknown }).status);

/**
 * The key is held by an attempt within its lease. That holder may be dead (its instance was killed) while the
 * database knows the outcome, or can learn it from the bank (the reconciler): where a database layer is on,
 * ask before "wait".
 */
async function answerInProgress<O, Found>(
  attempt: KeyedAttempt<O, Found>,
  owner: string | undefined,
  databaseDecides: boolean,
): Promise<KeyAnswer<O>> {
  const { key, span } = attempt;
  const settled = databaseDecides && owner ? await attempt.recovery.reconcile() : undefined;
  if (settled?.kind === 'settled' && owner) {
    // The key's own claim paid (its holder died before storing the outcome): this intent's payment.
    const outcome = settled.outcome;
    const done = { fingerprint: key.fingerprint, endpoint: nonDefault(attempt.endpoint), outcome, existing: false };
    if (attempt.at) await attempt.at('key.complete');
    await completeRequestKey(key.name, owner, done, attempt.resultTtlSeconds);
    decide(span, 'requestKey', 'stopped', () =>
      reason('keyAlreadySettled', { ...key.shown, status: statusOf(outcome) }),
    );
    return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: false };
  }
  decide(span, 'requestKey', 'stopped', () => reason('keyStillProcessing', key.shown));
  return { kind: 'in_progress', answeredBy: 'requestKey' };
}

/** The first request stalled or died past its lease, or its outcome is unknown: take its claim over. */
async function takeOver<O, Found>(
  attempt: KeyedAttempt<O, Found>,
  seen: RequestKeyClaim,
  options: RequestKeyOptions<O>,
): Promise<KeyClaim<O>> {
  const { key, span } = attempt;
  const taker = { owner: attempt.attemptId, fingerprint: key.fingerprint, endpoint: nonDefault(attempt.endpoint) };
  if (attempt.at) await attempt.at('key.takeOver');
  const context = { now: attempt.now(), ttlSeconds: attempt.resultTtlSeconds };
  const fence = await takeOverRequestKey(key.name, seen, taker, context);
  if (fence === undefined) {
    decide(span, 'requestKey', 'stopped', () => reason('keyTakenByAnother', key.shown));
    return { kind: 'stopped', answer: { kind: 'in_progress', answeredBy: 'requestKey' } };
  }
  const why = seen.unknown ? 'unknown' : 'lease';
  decide(span, 'requestKey', 'takeover', () =>
    reason('keyTakeover', { ...key.shown, why, oldFence: seen.fence, fence }),
  );
  // With layer 3 or 4 on, the database decides next. Alone, layer 2 asks the bank itself.
  const recovered = options.databaseDecides ? undefined : await recoverAlone(attempt, fence, seen, options);
  return recovered ? { kind: 'stopped', answer: recovered } : { kind: 'held', fence, seen };
}

/**
 * Layer 2 alone, having taken an abandoned claim over: the key is the only claim, so it asks the bank, under
 * the key's new token, about what was done under this key. Done (a charge, a refund): that is the intent's
 * outcome (the answer for this retry). Nothing, and nothing can land (or the bank's key will return what does):
 * undefined, the attempt goes on. Nothing yet: the claim stays in doubt.
 */
async function recoverAlone<O, Found>(
  attempt: KeyedAttempt<O, Found>,
  fence: number,
  seen: RequestKeyClaim,
  { bankKey, recordOnOrder }: RequestKeyOptions<O>,
): Promise<KeyAnswer<O> | undefined> {
  const { key, span, merchantRef, attemptId: owner } = attempt;
  const { verdict, askedAt } = await attempt.recovery.askBankAfterTakeover(
    { merchantRef, fence: { lock: requestKeyLock(key.name), token: fence }, byLock: true },
    seen,
  );
  const endpoint = nonDefault(attempt.endpoint);
  if (verdict.kind === 'charged') {
    const outcome = attempt.outcomeOf(verdict.charge);
    if (attempt.at) await attempt.at('order.record');
    await recordOnOrder(outcome, merchantRef);
    const done = { fingerprint: key.fingerprint, endpoint, outcome, existing: false };
    if (attempt.at) await attempt.at('key.complete');
    await completeRequestKey(key.name, owner, done, attempt.resultTtlSeconds);
    const found = (verdict.charge as { id?: unknown }).id;
    decide(span, 'requestKey', 'stopped', () => reason('keyBankHasCharge', { charge: String(found) }));
    return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: false };
  }
  const held = { name: key.name, fingerprint: key.fingerprint, endpoint, owner, fence, firstFence: seen.firstFence };
  if (verdict.kind === 'nothing' || bankKey) {
    if (attempt.at) await attempt.at('key.resume');
    if (!(await renewRequestKey(held, attempt.now(), true))) {
      decide(span, 'requestKey', 'lost', () => reason('claimLost'));
      return { kind: 'in_progress', answeredBy: 'requestKey' };
    }
    decide(span, 'requestKey', 'resumed', () => reason('keyResumed'));
    return undefined;
  }
  if (attempt.at) await attempt.at('key.keepUnknown');
  await markRequestKeyUnknown(held, seen.unknownSince ?? askedAt, attempt.resultTtlSeconds);
  decide(span, 'requestKey', 'stopped', () => reason('keyMayLand'));
  return { kind: 'in_progress', answeredBy: 'requestKey' };
}

/** The key this attempt holds, as the bank checks it, and its renewal after a pause. */
function leaseOf(attempt: Keyed, held: HeldKey, tookOver: boolean): Lease {
  return {
    fence: { lock: requestKeyLock(held.name), token: held.fence },
    byLock: true,
    layer: 'requestKey',
    tookOver,
    async renew(now): Promise<LostClaim | undefined> {
      if (attempt.at) await attempt.at('key.renew');
      if (await renewRequestKey(held, now)) return undefined;
      decide(attempt.span, 'requestKey', 'lost', () => reason('claimLost'));
      return { kind: 'in_progress', answeredBy: 'requestKey', takenOver: true };
    },
  };
}

/**
 * A later defence stopped this attempt before the bank, with `answer`: nothing moved. Returns the answer as
 * layer 2 words it. `seen`: the abandoned claim this attempt took over, if it did.
 */
async function stoppedAfter<A extends { kind: string }, O>(
  attempt: Keyed,
  held: HeldKey,
  seen: RequestKeyClaim | undefined,
  answer: A,
  fate: ClaimFate<O>,
): Promise<A> {
  switch (fate.kind) {
    case 'complete': {
      if (!isDuplicate<O>(answer)) return answer;
      // The first outcome is this intent's outcome too. Found under a key this attempt took over, it is the
      // intent's own payment, settled meanwhile: a replay, not another intent's.
      const mine = seen ? { ...answer, existing: false } : answer;
      await complete(attempt, held, mine.outcome, mine.existing);
      return mine;
    }
    case 'release':
      await release(attempt, held, fate.onError);
      return answer;
    case 'keepUnknown':
      // A key taken over from an earlier attempt of the same intent may still be that attempt's charge in
      // doubt: it goes back to "unknown", never away.
      if (await keepUnknown(attempt, held, seen?.unknownSince ?? attempt.now())) {
        decide(attempt.span, 'requestKey', 'unknown', () => reason('keyKeptUnknown'));
      }
      return answer;
    case 'leave':
      leave(attempt);
      return answer;
  }
}

function isDuplicate<O>(answer: { kind: string }): answer is { kind: 'duplicate'; outcome: O; existing: boolean } {
  return answer.kind === 'duplicate' && 'outcome' in answer;
}

/** The bank's verdict (and what failed after it), kept on the key this attempt holds. Never throws: money may have moved. */
async function settle<O>(attempt: Keyed, held: HeldKey, fate: ClaimFate<O>): Promise<void> {
  const { span } = attempt;
  switch (fate.kind) {
    case 'complete': {
      const said = fate.afterFailure ? 'keyCompletedAfterFailure' : 'keyCompleted';
      await complete(attempt, held, fate.outcome, fate.existing).then(
        (stored) => decide(span, 'requestKey', stored ? 'completed' : 'late', () => reason(stored ? said : 'keyLate')),
        (error: Error) => console.error(`[pay] ${attempt.merchantRef}: outcome not stored in Redis (${error.message})`),
      );
      return;
    }
    case 'release':
      await release(attempt, held, fate.onError).catch(() => {});
      return;
    case 'keepUnknown':
      await keepUnknown(attempt, held, fate.since ?? attempt.now()).catch(() => false);
      return;
    case 'leave':
      leave(attempt);
      return;
  }
}

async function complete(attempt: Keyed, held: HeldKey, outcome: unknown, existing: boolean): Promise<boolean> {
  if (attempt.at) await attempt.at('key.complete');
  const done = { fingerprint: held.fingerprint, endpoint: held.endpoint, outcome, existing };
  return completeRequestKey(held.name, held.owner, done, attempt.resultTtlSeconds);
}

/** `onError`: given back by the rule "any error", where the right rule would have kept it. */
async function release(attempt: Keyed, held: HeldKey, onError: boolean): Promise<void> {
  if (attempt.at) await attempt.at('key.release');
  if (await releaseRequestKey(held.name, held.owner))
    decide(attempt.span, 'requestKey', 'released', () => reason(onError ? 'keyReleasedOnError' : 'keyReleased'));
}

/** The rule "never": the key stays claimed by this attempt, which is done, until its lease runs out. */
function leave(attempt: Keyed): void {
  decide(attempt.span, 'requestKey', 'left', () => reason('keyLeft', { leaseMs: attempt.leaseMs }));
}

async function keepUnknown(attempt: Keyed, held: HeldKey, since: number): Promise<boolean> {
  if (attempt.at) await attempt.at('key.keepUnknown');
  return markRequestKeyUnknown(held, since, attempt.resultTtlSeconds);
}
