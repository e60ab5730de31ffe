import 'server-only';
// Layer 2's store: the request key in Redis, one Lua script per transition (claim, take over, renew,
// complete, release; each beside this file, each touching only the key it is given), and the record the
// key holds (record.ts: pure). The rules that decide what to do with what a key holds are defence.ts's.
import type { Result } from 'ioredis';
import { getRedis, readLua, redisWith } from '../../redis.ts';
import { type ClaimDecision, decideOnExisting, decodeRecord, encodeRecord, type RequestKeyClaim } from './record.ts';

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

const CLAIM = readLua('claimRequestKey', 'defences/request-key/claim.lua', 1);
const TAKE_OVER = readLua('takeOverRequestKey', 'defences/request-key/take-over.lua', 1);
const RENEW = readLua('renewRequestKey', 'defences/request-key/renew.lua', 1);
const COMPLETE = readLua('completeRequestKey', 'defences/request-key/complete.lua', 1);
const RELEASE = readLua('releaseRequestKey', 'defences/request-key/release.lua', 1);

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
