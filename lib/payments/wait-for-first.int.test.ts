// Prefer: wait=N, against the real Redis and PostgreSQL: 20 duplicates of a payment at a slow bank wait for its
// outcome instead of being told "in progress", each woken by the key's change, not by asking again and again.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_ON, chargeCount, newOrder, orderRow, sleep } from '../../test/payments.ts';
import { clientScope } from '../session.ts';
import { type PayResult, pay } from './pay.ts';
import { payWaitingForFirst } from './wait-for-first.ts';

/** Counts every command this process sends to Redis (every connection: the shared one, the subscriber). */
function countCommands(): { count: () => number; stop: () => void } {
  const original = Redis.prototype.sendCommand;
  let sent = 0;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof original>) {
    sent += 1;
    return original.apply(this, args);
  };
  const stop = () => {
    Redis.prototype.sendCommand = original;
  };
  return { count: () => sent, stop };
}

let stopCounting: (() => void) | undefined;
afterEach(() => stopCounting?.());

async function runningPayment(bankLatencyMs: number) {
  const orderNo = await newOrder({ layers: ALL_ON, faults: { bankLatencyMs } });
  const caller = clientScope(`waiter-${orderNo}`);
  const request = { orderNo, amountCents: 4_200, caller, channel: 'api' as const, idempotencyKey: `k-${orderNo}` };
  const first = pay(request);
  for (let i = 0; i < 100 && (await orderRow(orderNo))?.status !== 'PROCESSING'; i++) await sleep(20);
  return { orderNo, request, first };
}

describe('a duplicate that prefers to wait for the first outcome', () => {
  it('20 duplicates at a 2 s bank: each gets the first outcome as a replay, one charge, a few commands each', async () => {
    const { orderNo, request, first } = await runningPayment(2_000);
    const commands = countCommands();
    stopCounting = commands.stop;
    const waiters = await Promise.all(Array.from({ length: 20 }, () => payWaitingForFirst(request, 10)));
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
    // all). Asked every 100 ms instead, each would cost about twenty replays' worth over the two seconds.
    expect(waitingCommands / 20).toBeLessThanOrEqual(3 * perReplay + 2);
  });

  it('without the preference, or past its wait, the duplicate is told "in progress" as before', async () => {
    // A bank slow enough that the first is still running however busy this machine is when the wait ends.
    const { request, first } = await runningPayment(5_000);
    const told = (results: Array<{ result: PayResult; waited: boolean }>) => results.map(({ result }) => result.kind);
    expect(told([await payWaitingForFirst(request, 0)])).toEqual(['in_progress']);
    const short = await payWaitingForFirst(request, 1);
    expect(told([short])).toEqual(['in_progress']);
    expect(short.waited).toBe(true);
    expect((await first).kind).toBe('completed');
  });
});
