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
import type { CallerScope } from '../../session.ts';
import { decide, reason } from '../../telemetry/spans.ts';
import { type Answer, type Attempt, type Defence, type Intent, type Lease, stopped } from '../defence.ts';
import type { KeyStrategy } from '../layers.ts';
import { outcomeFromCharge, type PaymentOutcome, parseOutcome } from '../outcome.ts';
import { type ClaimFate, claimFate } from '../release.ts';
import { type KeySources, requestKeyFor, shortKey } from './key-strategy.ts';
import { type ClaimDecision, fingerprintOf, type RequestKeyClaim, requestKeyName } from './record.ts';
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

/** The layer 2 key an attempt runs under, as the lab's key strategy made it. */
export type AttemptKey = {
  /** The Redis key: `idem:{<caller>:<key>}`. */
  name: string;
  /** The payload as the caller sent it: the same key with another amount is a mismatch, not a retry. */
  fingerprint: string;
  /** The key as a step names it: "key <key> (<strategy>)", the strategy only when it is not `business`. */
  shown: { key: string; strategy: string };
};

/** The key one request runs under: the lab's key strategy applied to what the request says about its intent. */
export function attemptKeyOf(
  caller: CallerScope,
  strategy: KeyStrategy,
  sources: KeySources & { payload: { orderNo: string; amountCents: number } },
): AttemptKey {
  const key = requestKeyFor(strategy, sources);
  return {
    name: requestKeyName(caller, key),
    fingerprint: fingerprintOf(sources.payload),
    shown: { key: shortKey(key), strategy },
  };
}

/** An attempt as layer 2 sees it: with its key. */
type Keyed = Attempt & { key: AttemptKey };

/**
 * The attempt with its key, made once per attempt (a key minted per submit must be the same wherever it is
 * asked for: layer 1 asks when a spent token names its intent). The payload is what the caller stated, or the
 * order's amount (a browser states none).
 */
function keyed(attempt: Attempt): Keyed {
  let key = keys.get(attempt.intent);
  if (!key) {
    const { strategy, ...sources } = attempt.intent;
    const payload = { orderNo: attempt.orderNo, amountCents: attempt.statedAmountCents ?? attempt.amountCents };
    key = attemptKeyOf(attempt.caller, strategy, { ...sources, payload });
    keys.set(attempt.intent, key);
  }
  return { ...attempt, key };
}
const keys = new WeakMap<Intent, AttemptKey>();

/**
 * What layer 2 is told by the switches and by the defences beside it. `databaseDecides`: layer 3 or 4 is on,
 * so a claim found dead is settled by the database's claim, and a live-looking one is checked with the
 * reconciler before "in progress". `bankKey`: layer 5 is on, so after a takeover the bank's key returns
 * whatever charge may still land. `recordOnOrder`: how a charge found alone is written on the order (layers
 * 3 and 4 off: unguarded), given by whoever composes the defences.
 */
export type RequestKeyOptions = {
  databaseDecides: boolean;
  bankKey: boolean;
  recordOnOrder: (outcome: PaymentOutcome) => Promise<void>;
};

/** What layer 2's claim came to: the key held (`seen`: the abandoned claim it took over), or a duplicate's answer. */
type KeyClaim = { kind: 'held'; fence: number; seen?: RequestKeyClaim } | { kind: 'stopped'; answer: Answer };

/** Layer 2 as a defence. */
export function requestKeyDefence(options: RequestKeyOptions): Defence {
  return {
    layer: 'requestKey',
    async guard(asked, next) {
      const attempt = keyed(asked);
      const claim = await claimKey(attempt, options);
      if (claim.kind === 'stopped') return stopped(claim.answer);
      const { fence, seen } = claim;
      const { key, attemptId: owner } = attempt;
      const firstFence = seen?.firstFence ?? fence;
      const held: HeldKey = { name: key.name, fingerprint: key.fingerprint, owner, fence, firstFence };
      const tookOver = seen !== undefined;
      const end = await next({ lease: leaseOf(attempt, held, tookOver) });
      // What becomes of the key is the release rule's (release.ts): completed, released, kept in doubt, left.
      const fate = claimFate(attempt.release, end, tookOver);
      if (end.kind === 'banked') {
        await settle(attempt, held, fate);
        return end;
      }
      return { ...end, answer: await stoppedAfter(attempt, held, seen, end.answer, fate) };
    },
  };
}

async function claimKey(attempt: Keyed, options: RequestKeyOptions): Promise<KeyClaim> {
  const { key, span, attemptId, leaseMs } = attempt;
  const claim = { owner: attemptId, fingerprint: key.fingerprint };
  const ttlSeconds = attempt.resultTtlSeconds;
  await attempt.at?.('key.claim');
  const decision = await claimRequestKey(key.name, claim, { now: attempt.now(), leaseMs, ttlSeconds });
  switch (decision.kind) {
    case 'claimed':
      decide(span, 'requestKey', 'claimed', reason('keyClaimed', { ...key.shown, fence: decision.fence, leaseMs }));
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
function answerFromKey(decision: ClaimDecision, attempt: Keyed): Answer {
  const { span, key } = attempt;
  switch (decision.kind) {
    case 'replay': {
      const outcome = parseOutcome(decision.outcome);
      if (!outcome) break;
      decide(span, 'requestKey', 'stopped', reason('keyReplayed', { ...key.shown, status: outcome.status }));
      return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: decision.existing };
    }
    case 'mismatch':
      decide(span, 'requestKey', 'stopped', reason('keyMismatch', { ...key.shown, usedOn: decision.usedOn || 'none' }));
      return { kind: 'mismatch', usedOn: decision.usedOn };
    default:
      decide(span, 'requestKey', 'stopped', reason('keyStillProcessing', key.shown));
      return { kind: 'in_progress', answeredBy: 'requestKey' };
  }
  decide(span, 'requestKey', 'stopped', reason('keyUnreadable', key.shown));
  return { kind: 'in_progress', answeredBy: 'requestKey' };
}

/**
 * The key is held by an attempt within its lease. That holder may be dead (its instance was killed) while the
 * database knows the outcome, or can learn it from the bank (the reconciler): where a database layer is on,
 * ask before "wait".
 */
async function answerInProgress(attempt: Keyed, owner: string | undefined, databaseDecides: boolean): Promise<Answer> {
  const { key, span } = attempt;
  const settled = databaseDecides && owner ? await attempt.recovery.reconcile() : undefined;
  if (settled?.kind === 'settled' && owner) {
    // The key's own claim paid (its holder died before storing the outcome): this intent's payment.
    const outcome = settled.outcome;
    const done = { fingerprint: key.fingerprint, outcome, existing: false };
    await attempt.at?.('key.complete');
    await completeRequestKey(key.name, owner, done, attempt.resultTtlSeconds);
    decide(span, 'requestKey', 'stopped', reason('keyAlreadySettled', { ...key.shown, status: outcome.status }));
    return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: false };
  }
  decide(span, 'requestKey', 'stopped', reason('keyStillProcessing', key.shown));
  return { kind: 'in_progress', answeredBy: 'requestKey' };
}

/** The first request stalled or died past its lease, or its outcome is unknown: take its claim over. */
async function takeOver(attempt: Keyed, seen: RequestKeyClaim, options: RequestKeyOptions): Promise<KeyClaim> {
  const { key, span } = attempt;
  const taker = { owner: attempt.attemptId, fingerprint: key.fingerprint };
  await attempt.at?.('key.takeOver');
  const context = { now: attempt.now(), ttlSeconds: attempt.resultTtlSeconds };
  const fence = await takeOverRequestKey(key.name, seen, taker, context);
  if (fence === undefined) {
    decide(span, 'requestKey', 'stopped', reason('keyTakenByAnother', key.shown));
    return { kind: 'stopped', answer: { kind: 'in_progress', answeredBy: 'requestKey' } };
  }
  const why = seen.unknown ? 'unknown' : 'lease';
  decide(span, 'requestKey', 'takeover', reason('keyTakeover', { ...key.shown, why, oldFence: seen.fence, fence }));
  // With layer 3 or 4 on, the database decides next. Alone, layer 2 asks the bank itself.
  const recovered = options.databaseDecides ? undefined : await recoverAlone(attempt, fence, seen, options);
  return recovered ? { kind: 'stopped', answer: recovered } : { kind: 'held', fence, seen };
}

/**
 * Layer 2 alone, having taken an abandoned claim over: the key is the only claim, so it asks the bank, under
 * the key's new token, about the charges made under this key. A charge: the intent is paid (the answer for
 * this retry). Nothing, and nothing can land (or the bank's key will return what does): undefined, the
 * attempt goes on to pay. No charge yet: the claim stays in doubt.
 */
async function recoverAlone(
  attempt: Keyed,
  fence: number,
  seen: RequestKeyClaim,
  { bankKey, recordOnOrder }: RequestKeyOptions,
): Promise<Answer | undefined> {
  const { key, span, orderNo, attemptId: owner } = attempt;
  const { verdict, askedAt } = await attempt.recovery.askBankAfterTakeover(
    { merchantRef: orderNo, fence: { lock: requestKeyLock(key.name), token: fence }, byLock: true },
    seen,
  );
  if (verdict.kind === 'charged') {
    const outcome = outcomeFromCharge(orderNo, verdict.charge);
    await attempt.at?.('order.record');
    await recordOnOrder(outcome);
    const done = { fingerprint: key.fingerprint, outcome, existing: false };
    await attempt.at?.('key.complete');
    await completeRequestKey(key.name, owner, done, attempt.resultTtlSeconds);
    decide(span, 'requestKey', 'stopped', reason('keyBankHasCharge', { charge: verdict.charge.id }));
    return { kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: false };
  }
  const held = { name: key.name, fingerprint: key.fingerprint, owner, fence, firstFence: seen.firstFence };
  if (verdict.kind === 'nothing' || bankKey) {
    await attempt.at?.('key.resume');
    if (!(await renewRequestKey(held, attempt.now(), true))) {
      decide(span, 'requestKey', 'lost', reason('claimLost'));
      return { kind: 'in_progress', answeredBy: 'requestKey' };
    }
    decide(span, 'requestKey', 'resumed', reason('keyResumed'));
    return undefined;
  }
  await attempt.at?.('key.keepUnknown');
  await markRequestKeyUnknown(held, seen.unknownSince ?? askedAt, attempt.resultTtlSeconds);
  decide(span, 'requestKey', 'stopped', reason('keyMayLand'));
  return { kind: 'in_progress', answeredBy: 'requestKey' };
}

/** The key this attempt holds, as the bank checks it, and its renewal after a pause. */
function leaseOf(attempt: Keyed, held: HeldKey, tookOver: boolean): Lease {
  return {
    fence: { lock: requestKeyLock(held.name), token: held.fence },
    byLock: true,
    layer: 'requestKey',
    tookOver,
    async renew(now) {
      await attempt.at?.('key.renew');
      if (await renewRequestKey(held, now)) return undefined;
      decide(attempt.span, 'requestKey', 'lost', reason('claimLost'));
      return { kind: 'in_progress', answeredBy: 'requestKey', takenOver: true };
    },
  };
}

/**
 * A later defence stopped this attempt before the bank, with `answer`: nothing moved. Returns the answer as
 * layer 2 words it. `seen`: the abandoned claim this attempt took over, if it did.
 */
async function stoppedAfter(
  attempt: Keyed,
  held: HeldKey,
  seen: RequestKeyClaim | undefined,
  answer: Answer,
  fate: ClaimFate,
): Promise<Answer> {
  switch (fate.kind) {
    case 'complete': {
      if (answer.kind !== 'duplicate') return answer;
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
        decide(attempt.span, 'requestKey', 'unknown', reason('keyKeptUnknown'));
      }
      return answer;
    case 'leave':
      leave(attempt);
      return answer;
  }
}

/** The bank's verdict (and what failed after it), kept on the key this attempt holds. Never throws: money may have moved. */
async function settle(attempt: Keyed, held: HeldKey, fate: ClaimFate): Promise<void> {
  const { span, orderNo } = attempt;
  switch (fate.kind) {
    case 'complete': {
      const said = fate.afterFailure ? 'keyCompletedAfterFailure' : 'keyCompleted';
      await complete(attempt, held, fate.outcome, fate.existing).then(
        (stored) => decide(span, 'requestKey', stored ? 'completed' : 'late', reason(stored ? said : 'keyLate')),
        (error: Error) => console.error(`[pay] ${orderNo}: outcome not stored in Redis (${error.message})`),
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
  await attempt.at?.('key.complete');
  const done = { fingerprint: held.fingerprint, outcome, existing };
  return completeRequestKey(held.name, held.owner, done, attempt.resultTtlSeconds);
}

/** `onError`: given back by the rule "any error", where the right rule would have kept it. */
async function release(attempt: Keyed, held: HeldKey, onError: boolean): Promise<void> {
  await attempt.at?.('key.release');
  if (await releaseRequestKey(held.name, held.owner))
    decide(attempt.span, 'requestKey', 'released', reason(onError ? 'keyReleasedOnError' : 'keyReleased'));
}

/** The rule "never": the key stays claimed by this attempt, which is done, until its lease runs out. */
function leave(attempt: Keyed): void {
  decide(attempt.span, 'requestKey', 'left', reason('keyLeft', { leaseMs: attempt.leaseMs }));
}

async function keepUnknown(attempt: Keyed, held: HeldKey, since: number): Promise<boolean> {
  await attempt.at?.('key.keepUnknown');
  return markRequestKeyUnknown(held, since, attempt.resultTtlSeconds);
}
