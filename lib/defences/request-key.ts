import 'server-only';
// Layer 2: the request key. A caller sends a key that stays the same across the retries of one intent
// (the order number for a checkout, the Idempotency-Key for an API call). The first request claims it
// with SET NX PX and a short lease; the final outcome is stored for 24 hours and replayed to every retry;
// a failure before any money moved releases the claim; an unknown outcome keeps it for reconciliation.
// Every write after the claim is checked against the owner id, so a late worker cannot undo a newer one.
// Catches: client, gateway and queue retries. Misses: the window between "claimed" and "done" (a crash
// leaves a claim that only expires), and Redis and the database can disagree: layers 3 and 4 hold then.
import type { Result } from 'ioredis';
import { readLua, redisWith } from '../redis.ts';
import { type ClaimDecision, decideOnExisting, decodeRecord, encodeRecord } from './request-key-record.ts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    claimRequestKey(key: string, record: string, leaseMs: number): Result<string | null, Context>;
    completeRequestKey(key: string, owner: string, record: string, ttlMs: number): Result<number, Context>;
    releaseRequestKey(key: string, owner: string): Result<number, Context>;
  }
}

const CLAIM = readLua('claimRequestKey', 'defences/claim-request-key.lua', 1);
const COMPLETE = readLua('completeRequestKey', 'defences/complete-request-key.lua', 1);
const RELEASE = readLua('releaseRequestKey', 'defences/release-request-key.lua', 1);

export async function claimRequestKey(
  key: string,
  claim: { owner: string; fingerprint: string },
  leaseMs: number,
): Promise<ClaimDecision> {
  const record = encodeRecord({ state: 'processing', ...claim, since: Date.now() });
  const existing = await redisWith(CLAIM).claimRequestKey(key, record, leaseMs);
  if (existing === null) return { kind: 'claimed' };
  return decideOnExisting(decodeRecord(existing), claim.fingerprint);
}

/** Stores the final outcome for every later retry. False when another attempt owns the key now. */
export async function completeRequestKey(
  key: string,
  owner: string,
  done: { fingerprint: string; outcome: unknown },
  ttlSeconds: number,
): Promise<boolean> {
  const record = encodeRecord({ state: 'done', owner, ...done });
  return (await redisWith(COMPLETE).completeRequestKey(key, owner, record, ttlSeconds * 1000)) === 1;
}

/** The bank timed out: keep the claim (no retry may charge again) until reconciliation settles it. */
export async function markRequestKeyUnknown(
  key: string,
  owner: string,
  fingerprint: string,
  ttlSeconds: number,
): Promise<boolean> {
  const record = encodeRecord({ state: 'unknown', owner, fingerprint, since: Date.now() });
  return (await redisWith(COMPLETE).completeRequestKey(key, owner, record, ttlSeconds * 1000)) === 1;
}

/** Gives the key back after a failure before any money moved. Never after a charge. */
export async function releaseRequestKey(key: string, owner: string): Promise<boolean> {
  return (await redisWith(RELEASE).releaseRequestKey(key, owner)) === 1;
}
