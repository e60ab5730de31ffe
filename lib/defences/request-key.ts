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
// When the claim is given back: completed with the outcome once the bank has answered (or once a later
// layer found the first outcome); released when nothing moved (the bank refused, or a later layer stopped
// this attempt); kept "unknown" when the bank's answer is unknown, or when this attempt stops before the bank
// holding a claim it took over from an attempt whose charge may still be in doubt. Never released after a charge.
import type { Result } from 'ioredis';
import { getRedis, readLua, redisWith } from '../redis.ts';
import type { CallerScope } from '../session.ts';
import { decide, reason } from '../telemetry/spans.ts';
import { recordUnguarded } from './database-claim.ts';
import { type Answer, type Attempt, type AttemptKey, type Claim, type Defence, type Hold, stop } from './defence.ts';
import { type KeySources, requestKeyFor, shortKey } from './key-strategy.ts';
import type { KeyStrategy } from './layers.ts';
import { outcomeFromCharge, parseOutcome } from './outcome.ts';
import type { RacePoint } from './race-points.ts';
import {
  type ClaimDecision,
  decideOnExisting,
  decodeRecord,
  encodeRecord,
  fingerprintOf,
  type RequestKeyClaim,
  requestKeyName,
} from './request-key-record.ts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    claimRequestKey(key: string, record: string, ttlMs: number): Result<string | number, Context>;
    takeOverRequestKey(
      key: string,
      owner: string,
      fence: number,
      since: number,
      record: string,
      ttlMs: number,
    ): Result<number | null, Context>;
    renewRequestKey(
      key: string,
      owner: string,
      fence: number,
      now: number,
      clearDoubt: string,
    ): Result<number, Context>;
    completeRequestKey(key: string, owner: string, record: string, ttlMs: number): Result<number, Context>;
    releaseRequestKey(key: string, owner: string): Result<number, Context>;
  }
}

const CLAIM = readLua('claimRequestKey', 'defences/claim-request-key.lua', 1);
const TAKE_OVER = readLua('takeOverRequestKey', 'defences/take-over-request-key.lua', 1);
const RENEW = readLua('renewRequestKey', 'defences/renew-request-key.lua', 1);
const COMPLETE = readLua('completeRequestKey', 'defences/complete-request-key.lua', 1);
const RELEASE = readLua('releaseRequestKey', 'defences/release-request-key.lua', 1);

/**
 * What layer 2 holds for an attempt: the key, its fingerprint and endpoint, the claim's owner id and token, and
 * the first token of its chain of takeovers (the claim's own, unless it was taken over).
 */
export type HeldKey = {
  name: string;
  fingerprint: string;
  endpoint?: string;
  owner: string;
  fence: number;
  firstFence: number;
};

/** The lock name a request key's fencing token is checked against at the bank. */
export function requestKeyLock(name: string): string {
  return `key:${name}`;
}

export async function claimRequestKey(
  key: string,
  claim: { owner: string; fingerprint: string; endpoint?: string },
  context: { now: number; leaseMs: number; ttlSeconds: number },
): Promise<ClaimDecision> {
  const record = encodeRecord({ state: 'processing', ...claim, since: context.now });
  const reply = await redisWith(CLAIM).claimRequestKey(key, record, context.ttlSeconds * 1000);
  if (typeof reply === 'number') return { kind: 'claimed', fence: reply };
  return decideOnExisting(decodeRecord(reply), claim.fingerprint, { ...context, endpoint: claim.endpoint });
}

/**
 * Takes over an abandoned claim: a compare-and-set on the owner, the token and the renewal that were judged.
 * The new claim keeps the first token of the chain and the time its outcome came into doubt (the bank's
 * settlement window runs from it). Returns the new token, or undefined when someone else moved first.
 */
export async function takeOverRequestKey(
  key: string,
  seen: RequestKeyClaim,
  taker: { owner: string; fingerprint: string; endpoint?: string },
  context: { now: number; ttlSeconds: number },
): Promise<number | undefined> {
  const record = encodeRecord({
    state: 'processing',
    ...taker,
    since: context.now,
    unknownSince: seen.unknownSince,
  });
  const fence = await redisWith(TAKE_OVER).takeOverRequestKey(
    key,
    seen.holder ?? '',
    seen.fence,
    seen.claimedAt,
    record,
    context.ttlSeconds * 1000,
  );
  return fence ?? undefined;
}

/**
 * Renews a claim this attempt still holds; false when it was taken over (the attempt must stop). `resumed`: a
 * claim taken over, which goes on to pay now that the bank was asked: the time its outcome came into doubt is
 * cleared (a later taker's window runs from its own question, never from before this attempt's charge).
 */
export async function renewRequestKey(held: HeldKey, now: number, resumed = false): Promise<boolean> {
  const renew = redisWith(RENEW).renewRequestKey(held.name, held.owner, held.fence, now, resumed ? '1' : '0');
  return (await renew) === 1;
}

/**
 * What a key already holds, without claiming it: for a request that may not run (its page token is
 * spent) but whose key may have the answer. Undefined when the key holds nothing.
 */
export async function peekRequestKey(
  key: string,
  fingerprint: string,
  context: { now: number; leaseMs: number; endpoint?: string },
): Promise<ClaimDecision | undefined> {
  const raw = await getRedis().get(key);
  if (raw === null) return undefined;
  return decideOnExisting(decodeRecord(raw), fingerprint, context);
}

/**
 * Stores the final outcome for every later retry, and how it was first answered (`existing`), so every
 * replay answers exactly alike. False when another attempt holds the key now.
 */
export async function completeRequestKey(
  key: string,
  owner: string,
  done: { fingerprint: string; endpoint?: string; outcome: unknown; existing: boolean },
  ttlSeconds: number,
): Promise<boolean> {
  const record = encodeRecord({ state: 'done', owner, ...done });
  return (await redisWith(COMPLETE).completeRequestKey(key, owner, record, ttlSeconds * 1000)) === 1;
}

/**
 * The outcome is unknown (the bank timed out, or it has no charge yet but one may still land): keep the
 * claim, so no retry charges again, but let go of it: the next retry (or this one later) takes it over
 * and asks the bank. `unknownSince`: since when the outcome is in doubt.
 */
export async function markRequestKeyUnknown(held: HeldKey, unknownSince: number, ttlSeconds: number): Promise<boolean> {
  const record = encodeRecord({
    state: 'unknown',
    owner: null,
    fingerprint: held.fingerprint,
    endpoint: held.endpoint,
    since: unknownSince,
    fence: held.fence,
    firstFence: held.firstFence,
    unknownSince,
  });
  return (await redisWith(COMPLETE).completeRequestKey(held.name, held.owner, record, ttlSeconds * 1000)) === 1;
}

/** Gives the key back after a failure before any money moved. Never after a charge. */
export async function releaseRequestKey(key: string, owner: string): Promise<boolean> {
  return (await redisWith(RELEASE).releaseRequestKey(key, owner)) === 1;
}

// ---- Layer 2 as a defence ---------------------------------------------------------------------------------

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

/**
 * Layer 2 as a defence. `databaseDecides`: layer 3 or 4 is on, so a claim found dead is settled by the
 * database's claim, and a live-looking one is checked with the reconciler before "in progress".
 * `bankKey`: layer 5 is on, so after a takeover the bank's key returns whatever charge may still land.
 */
export function requestKeyDefence(options: { databaseDecides: boolean; bankKey: boolean }): Defence {
  return {
    layer: 'requestKey',
    async claim(attempt) {
      const { key, span, attemptId, leaseMs } = attempt;
      const claim = { owner: attemptId, fingerprint: key.fingerprint };
      const ttlSeconds = attempt.resultTtlSeconds;
      await attempt.at?.('key.claim');
      const decision = await claimRequestKey(key.name, claim, { now: attempt.now(), leaseMs, ttlSeconds });
      switch (decision.kind) {
        case 'claimed':
          decide(span, 'requestKey', 'claimed', reason('keyClaimed', { ...key.shown, fence: decision.fence, leaseMs }));
          return { kind: 'held', hold: keyHold(attempt, decision.fence) };
        case 'replay':
        case 'mismatch':
          return stop(answerFromKey(decision, attempt));
        case 'in_progress':
          return stop(await answerInProgress(attempt, decision.owner, options.databaseDecides));
        case 'abandoned':
          return takeOver(attempt, decision.claim, options);
      }
    },
  };
}

/** What layer 2 answers from a key that already holds something: its first outcome, or a mismatch. */
export function answerFromKey(decision: ClaimDecision, attempt: Attempt): Answer {
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
async function answerInProgress(
  attempt: Attempt,
  owner: string | undefined,
  databaseDecides: boolean,
): Promise<Answer> {
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
async function takeOver(
  attempt: Attempt,
  seen: RequestKeyClaim,
  options: { databaseDecides: boolean; bankKey: boolean },
): Promise<Claim> {
  const { key, span } = attempt;
  const taker = { owner: attempt.attemptId, fingerprint: key.fingerprint };
  await attempt.at?.('key.takeOver');
  const context = { now: attempt.now(), ttlSeconds: attempt.resultTtlSeconds };
  const fence = await takeOverRequestKey(key.name, seen, taker, context);
  if (fence === undefined) {
    decide(span, 'requestKey', 'stopped', reason('keyTakenByAnother', key.shown));
    return stop({ kind: 'in_progress', answeredBy: 'requestKey' });
  }
  const why = seen.unknown ? 'unknown' : 'lease';
  decide(span, 'requestKey', 'takeover', reason('keyTakeover', { ...key.shown, why, oldFence: seen.fence, fence }));
  const hold = keyHold(attempt, fence, seen);
  // With layer 3 or 4 on, the database decides next. Alone, layer 2 asks the bank itself.
  if (options.databaseDecides) return { kind: 'held', hold };
  const recovered = await recoverAlone(attempt, fence, seen, options.bankKey);
  return recovered ? stop(recovered) : { kind: 'held', hold };
}

/**
 * Layer 2 alone, having taken an abandoned claim over: the key is the only claim, so it asks the bank, under
 * the key's new token, about the charges made under this key. A charge: the intent is paid (the answer for
 * this retry). Nothing, and nothing can land (or the bank's key will return what does): undefined, the
 * attempt goes on to pay. No charge yet: the claim stays in doubt.
 */
async function recoverAlone(
  attempt: Attempt,
  fence: number,
  seen: RequestKeyClaim,
  bankKey: boolean,
): Promise<Answer | undefined> {
  const { key, span, orderNo, attemptId: owner } = attempt;
  const { verdict, askedAt } = await attempt.recovery.askBankAfterTakeover(
    { merchantRef: orderNo, fence: { lock: requestKeyLock(key.name), token: fence }, byLock: true },
    seen,
  );
  if (verdict.kind === 'charged') {
    const outcome = outcomeFromCharge(orderNo, verdict.charge);
    await attempt.at?.('order.record');
    await recordUnguarded(outcome);
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

/** The key this attempt holds (`seen`: the earlier attempt's claim it took over, if it did). */
function keyHold(attempt: Attempt, fence: number, seen?: RequestKeyClaim): Hold {
  const { key, span, orderNo } = attempt;
  const firstFence = seen?.firstFence ?? fence;
  const held: HeldKey = { name: key.name, fingerprint: key.fingerprint, owner: attempt.attemptId, fence, firstFence };
  const ttlSeconds = attempt.resultTtlSeconds;
  const at = async (point: RacePoint) => attempt.at?.(point);
  const complete = async (outcome: unknown, existing: boolean) => {
    await at('key.complete');
    return completeRequestKey(key.name, held.owner, { fingerprint: key.fingerprint, outcome, existing }, ttlSeconds);
  };
  const release = async () => {
    await at('key.release');
    if (await releaseRequestKey(key.name, held.owner)) decide(span, 'requestKey', 'released', reason('keyReleased'));
  };
  const keepUnknown = async (since: number) => {
    await at('key.keepUnknown');
    return markRequestKeyUnknown(held, since, ttlSeconds);
  };
  return {
    fence: { fence: { lock: requestKeyLock(key.name), token: fence }, byLock: true, layer: 'requestKey' },
    tookOver: seen !== undefined,
    async renew(now) {
      await at('key.renew');
      if (await renewRequestKey(held, now)) return undefined;
      decide(span, 'requestKey', 'lost', reason('claimLost'));
      return { kind: 'in_progress', answeredBy: 'requestKey' };
    },
    async stopped(answer) {
      if (answer.kind === 'duplicate') {
        // The first outcome is this intent's outcome too. Found under a key this attempt took over, it is the
        // intent's own payment, settled meanwhile: a replay, not another intent's.
        const mine = seen ? { ...answer, existing: false } : answer;
        await complete(mine.outcome, mine.existing);
        return mine;
      }
      // A key taken over from an earlier attempt of the same intent may still be that attempt's charge in
      // doubt: it goes back to "unknown", never away.
      if (!seen) await release();
      else if (await keepUnknown(seen.unknownSince ?? attempt.now())) {
        decide(span, 'requestKey', 'unknown', reason('keyKeptUnknown'));
      }
      return answer;
    },
    async settle(verdict) {
      switch (verdict.kind) {
        case 'settled':
          await complete(verdict.outcome, verdict.existing).then(
            (stored) =>
              decide(span, 'requestKey', stored ? 'completed' : 'late', reason(stored ? 'keyCompleted' : 'keyLate')),
            (error: Error) => console.error(`[pay] ${orderNo}: outcome not stored in Redis (${error.message})`),
          );
          return;
        case 'nothingMoved':
          await release().catch(() => {});
          return;
        case 'unknown':
          await keepUnknown(verdict.since).catch(() => false);
          return;
      }
    },
  };
}
