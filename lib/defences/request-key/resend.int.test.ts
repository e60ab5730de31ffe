// Layer 2's scripts sent twice by the Redis client itself. A connection that drops after Redis applied a command
// and before its answer came back leaves the command unanswered; ioredis connects again and sends it again, and
// the caller gets the second run's answer. An idempotency layer must be idempotent itself: the second run of a
// claim, a takeover or a completion finds its own first run's write, and must say so, not "someone else".
// Through a proxy that loses the one answer (test/lost-reply.ts), with the real client, Redis and PostgreSQL.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lostReplyProxy } from '../../../test/lost-reply.ts';
import {
  chargeCount,
  newOrder,
  only,
  SimulatedCrash,
  setOrderLab,
  sleep,
  testPayOptions,
} from '../../../test/payments.ts';
import { pay } from '../../payments/pay.ts';
import { closeRedis } from '../../redis.ts';
import { clientScope } from '../../session.ts';
import { requestKeyName } from './record.ts';
import {
  claimRequestKey,
  completeRequestKey,
  type HeldKey,
  markRequestKeyUnknown,
  takeOverRequestKey,
} from './store.ts';

/**
 * How a request runs a script: ioredis sends the script itself the first time a client runs it (EVAL), and its
 * SHA-1 after that (EVALSHA).
 */
function runs(file: string): (request: string) => boolean {
  const lua = readFileSync(path.join(import.meta.dirname, file), 'utf8');
  const sha = createHash('sha1').update(lua).digest('hex');
  return (request) => request.includes(sha) || request.includes(lua);
}
const SCRIPTS = { claim: runs('claim.lua'), takeOver: runs('take-over.lua') };

const direct = new Redis(process.env.REDIS_URL ?? '');
const proxy = await lostReplyProxy(process.env.REDIS_URL ?? '');
beforeAll(() => {
  // This file's client goes through the proxy (env() is read at the first payment, after this).
  process.env.REDIS_URL = proxy.url;
  closeRedis();
});
afterAll(async () => {
  closeRedis();
  await Promise.all([proxy.close(), direct.quit()]);
});

const caller = clientScope('resend');
const api = (orderNo: string) => ({
  orderNo,
  caller,
  channel: 'api' as const,
  amountCents: 4_200,
  idempotencyKey: `resend-${orderNo}`,
});
const keyOf = (orderNo: string) => requestKeyName(caller, `resend-${orderNo}`);

/** The key's record as Redis holds it now, read past the proxy. */
async function record(orderNo: string): Promise<{ state?: string; owner?: string | null } | undefined> {
  const raw = await direct.get(keyOf(orderNo));
  return raw === null ? undefined : JSON.parse(raw);
}

/** Loses the answer to the next run of `script` on this order's key, once Redis shows `applied`. */
function loseAnswer(script: keyof typeof SCRIPTS, orderNo: string, applied: () => Promise<boolean>): Promise<void> {
  const name = keyOf(orderNo);
  return proxy.loseReplyTo((request) => SCRIPTS[script](request) && request.includes(name), applied);
}

describe("layer 2's scripts, sent again after their answer was lost", () => {
  it('a claim: the payment goes on under it and charges once (not "in progress" against itself)', async () => {
    const orderNo = await newOrder({ layers: only('requestKey') });
    const cut = loseAnswer('claim', orderNo, async () => (await record(orderNo))?.state === 'processing');
    const result = await pay(api(orderNo), testPayOptions());
    await cut;
    expect(result).toMatchObject({ kind: 'completed', outcome: { status: 'PAID' } });
    expect(await chargeCount(orderNo)).toBe(1);
    expect((await record(orderNo))?.state).toBe('done');
  });

  it('a takeover: the retry that took the claim over asks the bank and answers with its charge', async () => {
    const claims = { leaseMs: 300 };
    const orderNo = await newOrder({ layers: only('requestKey'), faults: { crashAfterCharge: true }, claims });
    await expect(pay(api(orderNo), testPayOptions())).rejects.toThrow(SimulatedCrash);
    const dead = (await record(orderNo))?.owner;
    await setOrderLab(orderNo, { layers: only('requestKey'), faults: {}, claims });
    await sleep(claims.leaseMs + 100); // the crashed attempt's claim is abandoned now

    const cut = loseAnswer('takeOver', orderNo, async () => {
      const now = await record(orderNo);
      return now?.state === 'processing' && now.owner !== dead;
    });
    const retry = await pay(api(orderNo), testPayOptions());
    await cut;
    expect(retry).toMatchObject({ kind: 'duplicate', outcome: { status: 'PAID' } });
    expect(await chargeCount(orderNo)).toBe(1);
    expect((await record(orderNo))?.state).toBe('done');
  });
});

describe("layer 2's scripts, each run twice with the same arguments (as a client resends it)", () => {
  const context = { leaseMs: 1_000, ttlSeconds: 60 };
  const claimant = (owner: string) => ({ owner, fingerprint: 'f', endpoint: 'payments' });

  it("a claim: the second run gives the first run's token", async () => {
    const name = `twice:{claim-${Date.now()}}`;
    const now = Date.now();
    const first = await claimRequestKey(name, claimant('a1'), { ...context, now });
    const again = await claimRequestKey(name, claimant('a1'), { ...context, now });
    expect(first).toMatchObject({ kind: 'claimed' });
    expect(again).toEqual(first);
    // Another attempt's claim, even at the same moment, is not this one's: "in progress".
    expect(await claimRequestKey(name, claimant('a2'), { ...context, now })).toMatchObject({ kind: 'in_progress' });
  });

  it("a takeover: the second run gives the first run's token, and the claim stays the taker's", async () => {
    const name = `twice:{takeover-${Date.now()}}`;
    const claimedAt = Date.now() - 5_000;
    const claim = await claimRequestKey(name, claimant('dead'), { ...context, now: claimedAt });
    if (claim.kind !== 'claimed') throw new Error('not claimed');
    const seen = {
      holder: 'dead',
      fence: claim.fence,
      firstFence: claim.fence,
      claimedAt,
      unknownSince: null,
      unknown: false,
    };
    const now = Date.now();
    const first = await takeOverRequestKey(name, seen, claimant('taker'), { now, ttlSeconds: 60 });
    const again = await takeOverRequestKey(name, seen, claimant('taker'), { now, ttlSeconds: 60 });
    expect(first).toBeGreaterThan(claim.fence);
    expect(again).toBe(first);
    // Another taker of the same abandoned claim moved too late.
    expect(await takeOverRequestKey(name, seen, claimant('other'), { now, ttlSeconds: 60 })).toBeUndefined();
  });

  it('a completion and a mark of doubt: the second run says written', async () => {
    for (const end of ['complete', 'unknown'] as const) {
      const name = `twice:{${end}-${Date.now()}}`;
      const now = Date.now();
      const claim = await claimRequestKey(name, claimant('a1'), { ...context, now });
      if (claim.kind !== 'claimed') throw new Error('not claimed');
      const held: HeldKey = {
        name,
        fingerprint: 'f',
        endpoint: 'payments',
        owner: 'a1',
        ...{ fence: claim.fence },
        firstFence: claim.fence,
      };
      const write = () =>
        end === 'complete'
          ? completeRequestKey(name, 'a1', { fingerprint: 'f', outcome: { status: 'PAID' }, existing: false }, 60)
          : markRequestKeyUnknown(held, now, 60);
      expect(await write()).toBe(true);
      expect(await write()).toBe(true);
      // Not another attempt's write.
      expect(await completeRequestKey(name, 'a2', { fingerprint: 'f', outcome: {}, existing: false }, 60)).toBe(false);
    }
  });
});
