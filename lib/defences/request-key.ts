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
import type { Result } from 'ioredis';
import { getRedis, readLua, redisWith } from '../redis.ts';
import {
  type ClaimDecision,
  decideOnExisting,
  decodeRecord,
  encodeRecord,
  type RequestKeyClaim,
} from './request-key-record.ts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    claimRequestKey(key: string, record: string, ttlMs: number): Result<string | number, Context>;
    takeOverRequestKey(
      key: string,
      owner: string,
      fence: number,
      record: string,
      ttlMs: number,
    ): Result<number | null, Context>;
    renewRequestKey(key: string, owner: string, fence: number, now: number): Result<number, Context>;
    completeRequestKey(key: string, owner: string, record: string, ttlMs: number): Result<number, Context>;
    releaseRequestKey(key: string, owner: string): Result<number, Context>;
  }
}

const CLAIM = readLua('claimRequestKey', 'defences/claim-request-key.lua', 1);
const TAKE_OVER = readLua('takeOverRequestKey', 'defences/take-over-request-key.lua', 1);
const RENEW = readLua('renewRequestKey', 'defences/renew-request-key.lua', 1);
const COMPLETE = readLua('completeRequestKey', 'defences/complete-request-key.lua', 1);
const RELEASE = readLua('releaseRequestKey', 'defences/release-request-key.lua', 1);

/** What layer 2 holds for an attempt: the key, its fingerprint and endpoint, and the claim's owner id and token. */
export type HeldKey = { name: string; fingerprint: string; endpoint?: string; owner: string; fence: number };

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
 * Takes over an abandoned claim: a compare-and-set on the owner and the token that were judged. The new
 * claim keeps the time its outcome came into doubt (the bank's settlement window runs from it). Returns
 * the new token, or undefined when someone else moved first.
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
    record,
    context.ttlSeconds * 1000,
  );
  return fence ?? undefined;
}

/** Renews a claim this attempt still holds; false when it was taken over (the attempt must stop). */
export async function renewRequestKey(held: HeldKey, now: number): Promise<boolean> {
  return (await redisWith(RENEW).renewRequestKey(held.name, held.owner, held.fence, now)) === 1;
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
    unknownSince,
  });
  return (await redisWith(COMPLETE).completeRequestKey(held.name, held.owner, record, ttlSeconds * 1000)) === 1;
}

/** Gives the key back after a failure before any money moved. Never after a charge. */
export async function releaseRequestKey(key: string, owner: string): Promise<boolean> {
  return (await redisWith(RELEASE).releaseRequestKey(key, owner)) === 1;
}
