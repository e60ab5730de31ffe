// Prefer: wait=N, against the real Redis and PostgreSQL: 20 duplicates of a payment at a slow bank wait for its
// outcome instead of being told "in progress", each woken by the key's change, not by asking again and again.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_ON, chargeCount, newOrder, sleep } from '../../test/payments.ts';
import { requestKeyName } from '../defences/request-key/record.ts';
import { clientScope } from '../session.ts';
import { defaultPayOptions, type PayResult, pay } from './pay.ts';
import { payWaitingForFirst } from './wait-for-first.ts';

/**
 * Counts the commands this process sends to Redis (every connection: the shared one, the subscriber), but
 * the lab's: its timeline gathers the lanes of 25 ms into one write, whichever requests they are from.
 */
function countCommands(): { count: () => number; stop: () => void } {
  const original = Redis.prototype.sendCommand;
  let sent = 0;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof original>) {
    const key = String(args[0]?.args[0] ?? '');
    if (!key.startsWith('lab:timeline') && !key.startsWith('{lab:timeline}')) sent += 1;
    return original.apply(this, args);
  };
  const stop = () => {
    Redis.prototype.sendCommand = original;
  };
  return { count: () => sent, stop };
}

let stopCounting: (() => void) | undefined;
afterEach(() => stopCounting?.());

/** The waiters watching a request key in this process (watch.ts keeps them on globalThis). */
function watchersOf(key: string): number {
  const registry = globalThis as { requestKeyWatcher?: { waiters: Map<string, Set<unknown>> } };
  return registry.requestKeyWatcher?.waiters.get(key)?.size ?? 0;
}

async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let waited = 0; !(await condition()); waited += 10) {
    if (waited > 60_000) throw new Error(`still not ${what} after a minute`);
    await sleep(10);
  }
}

/**
 * A payment held just before the bank (its claims taken) until `go()`: however busy this machine is, the
 * duplicates find it running, and it finishes only when the test says so.
 */
async function runningPayment(bankLatencyMs: number) {
  const orderNo = await newOrder({ layers: ALL_ON, faults: { bankLatencyMs } });
  const caller = clientScope(`waiter-${orderNo}`);
  const request = { orderNo, amountCents: 4_200, caller, channel: 'api' as const, idempotencyKey: `k-${orderNo}` };
  let go = () => {};
  const released = new Promise<void>((resolve) => {
    go = resolve;
  });
  let atBank = false;
  const first = pay(request, {
    ...defaultPayOptions(),
    at: async (point) => {
      if (point !== 'pay.bank') return;
      atBank = true;
      await released;
    },
  });
  await until(() => atBank, 'at the bank');
  return { orderNo, request, first, go, key: requestKeyName(caller, request.idempotencyKey) };
}

describe('a duplicate that prefers to wait for the first outcome', () => {
  it('20 duplicates of a payment at a 2 s bank: each gets the first outcome as a replay, one charge, a few commands each', async () => {
    const { orderNo, request, first, go, key } = await runningPayment(2_000);
    const commands = countCommands();
    stopCounting = commands.stop;
    const started = Date.now();
    const waiting = Promise.all(Array.from({ length: 20 }, () => payWaitingForFirst(request, 30)));
    // Each told "in progress" and watching the key before the first goes on to its 2 s at the bank.
    await until(() => watchersOf(key) === 20, 'all 20 watching');
    go();
    const waiters = await waiting;
    const waitedMs = Date.now() - started;
    const waitingCommands = commands.count();
    const firstResult = await first;
    expect(firstResult.kind).toBe('completed');
    const outcome = firstResult.kind === 'completed' ? firstResult.outcome : undefined;
    for (const { result, waited } of waiters) {
      expect(waited).toBe(true);
      expect(result).toMatchObject({ kind: 'duplicate', outcome, answeredBy: 'requestKey', existing: false });
    }
    expect(await chargeCount(orderNo)).toBe(1);

    // What one replay costs, asked once the payment is done: the unit of a waiter's cost.
    const before = commands.count();
    const replay = await pay(request);
    expect(replay.kind).toBe('duplicate');
    const perReplay = commands.count() - before;
    // Each waiter: its first answer, one question once watching, one when woken (and a subscription shared by
    // all), and one more for each 3 s it waited (the fallback: a busy machine's wait lasts longer). Asked
    // every 100 ms instead, each would cost about twenty replays' worth over the bank's two seconds.
    const fallbacks = Math.floor(waitedMs / 3_000); // watch.ts's FALLBACK_MS, as documented
    expect(waitingCommands / 20).toBeLessThanOrEqual((3 + fallbacks) * perReplay + 2);
  });

  it('without the preference, or past its wait, the duplicate is told "in progress" as before', async () => {
    const { request, first, go } = await runningPayment(0);
    const told = (results: Array<{ result: PayResult; waited: boolean }>) => results.map(({ result }) => result.kind);
    expect(told([await payWaitingForFirst(request, 0)])).toEqual(['in_progress']);
    const short = await payWaitingForFirst(request, 1);
    expect(told([short])).toEqual(['in_progress']);
    expect(short.waited).toBe(true);
    go();
    expect((await first).kind).toBe('completed');
  });
});
