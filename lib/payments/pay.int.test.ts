// The layers and the pipeline, against the real Redis and PostgreSQL, under real concurrency.
// The number that matters is the card network's: how many charges the order has.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ALL_OFF,
  ALL_ON,
  awayPastHalfLease,
  chargeCount,
  forgetEverythingInRedis,
  holdAt,
  newOrder,
  only,
  orderRow,
  SimulatedCrash,
  setOrderLab,
  sleep,
  testPayOptions,
} from '../../test/payments.ts';
import { issueCheckoutToken } from '../defences/checkout-token/defence.ts';
import { requestKeyName } from '../defences/request-key/record.ts';
import type { Layers } from '../lab/settings.ts';
import { getRedis } from '../redis.ts';
import { type CallerScope, clientScope, sessionScope } from '../session.ts';
import { type PayResult, pay } from './pay.ts';
import { reconcileStalePayments } from './reconcile.ts';

const N = 20;
const newSession = (): CallerScope => sessionScope(randomBytes(16).toString('base64url'));
const kinds = (results: PayResult[]) => results.map((result) => result.kind);

/** N concurrent submits of one checkout page: one session, one page token. */
async function doubleSubmits(layers: Layers, n = N) {
  const orderNo = await newOrder({ layers, faults: { bankLatencyMs: 150 } });
  const caller = newSession();
  const { token } = await issueCheckoutToken(orderNo, caller, 300);
  const results = await Promise.all(
    Array.from({ length: n }, () =>
      pay({ orderNo, caller, channel: 'browser', checkoutToken: token }, testPayOptions()),
    ),
  );
  return { orderNo, results, charges: await chargeCount(orderNo) };
}

function expectOneFirstOutcome(results: PayResult[]) {
  const completed = results.filter((result) => result.kind === 'completed');
  expect(completed).toHaveLength(1);
  const first = completed[0]?.kind === 'completed' ? completed[0].outcome : undefined;
  expect(first?.status).toBe('PAID');
  for (const result of results) {
    if (result.kind === 'duplicate') expect(result.outcome).toEqual(first);
  }
  return first;
}

describe('N concurrent duplicates of one payment', () => {
  it('layer 1 alone: one request consumes the token, the others are "already submitted"', async () => {
    const { results, charges } = await doubleSubmits(only('token'));
    expect(charges).toBe(1);
    expectOneFirstOutcome(results);
    expect(kinds(results).filter((kind) => kind === 'already_submitted')).toHaveLength(N - 1);
  });

  for (const layer of ['requestKey', 'stateMachine', 'uniqueConstraint'] as const) {
    it(`${layer} alone: one charge; the others get the first outcome or "in progress" from ${layer}`, async () => {
      const { results, charges } = await doubleSubmits(only(layer));
      expect(charges).toBe(1);
      expectOneFirstOutcome(results);
      for (const result of results.filter((r) => r.kind !== 'completed')) {
        expect(['duplicate', 'in_progress']).toContain(result.kind);
        if (result.kind === 'duplicate' || result.kind === 'in_progress') expect(result.answeredBy).toBe(layer);
      }
    });
  }

  it('all layers: one charge; the same page is stopped by the token', async () => {
    const { results, charges } = await doubleSubmits(ALL_ON);
    expect(charges).toBe(1);
    expectOneFirstOutcome(results);
    expect(kinds(results).filter((kind) => kind === 'already_submitted')).toHaveLength(N - 1);
  });

  it('all layers: one charge when N different sessions (tabs, devices) pay the order at once', async () => {
    const orderNo = await newOrder({ layers: ALL_ON, faults: { bankLatencyMs: 150 } });
    const results = await Promise.all(
      Array.from({ length: N }, async () => {
        const caller = newSession();
        const { token } = await issueCheckoutToken(orderNo, caller, 300);
        return pay({ orderNo, caller, channel: 'browser', checkoutToken: token }, testPayOptions());
      }),
    );
    expect(await chargeCount(orderNo)).toBe(1);
    expectOneFirstOutcome(results);
    for (const result of results.filter((r) => r.kind !== 'completed')) {
      expect(['duplicate', 'in_progress']).toContain(result.kind);
    }
  });

  it('all layers off: the card is charged once per request', async () => {
    const { results, charges } = await doubleSubmits(ALL_OFF);
    expect(charges).toBe(N);
    expect(kinds(results).every((kind) => kind === 'completed')).toBe(true);
  });

  it('an API burst with one Idempotency-Key: one charge, every other answer from layer 2', async () => {
    const orderNo = await newOrder({ layers: ALL_ON, faults: { bankLatencyMs: 150 } });
    const caller = clientScope('shop-backend');
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        pay(
          { orderNo, caller, channel: 'api', idempotencyKey: `burst-${orderNo}`, amountCents: 4200 },
          testPayOptions(),
        ),
      ),
    );
    expect(await chargeCount(orderNo)).toBe(1);
    expectOneFirstOutcome(results);
  });
});

describe('sequential duplicates (the second after the first finished)', () => {
  it('layer 2 replays the stored outcome', async () => {
    const orderNo = await newOrder({ layers: only('requestKey') });
    const caller = newSession();
    const first = await pay({ orderNo, caller, channel: 'browser' }, testPayOptions());
    const second = await pay({ orderNo, caller, channel: 'browser' }, testPayOptions());
    expect(first.kind).toBe('completed');
    expect(second).toMatchObject({ kind: 'duplicate', answeredBy: 'requestKey' });
    if (first.kind === 'completed' && second.kind === 'duplicate') expect(second.outcome).toEqual(first.outcome);
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('layer 3 returns the current state', async () => {
    const orderNo = await newOrder({ layers: only('stateMachine') });
    const first = await pay({ orderNo, caller: newSession(), channel: 'browser' }, testPayOptions());
    const second = await pay({ orderNo, caller: newSession(), channel: 'browser' }, testPayOptions());
    expect(second).toMatchObject({ kind: 'duplicate', answeredBy: 'stateMachine' });
    if (first.kind === 'completed' && second.kind === 'duplicate') expect(second.outcome).toEqual(first.outcome);
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('layer 4 returns the outcome stored on the dedup row', async () => {
    const orderNo = await newOrder({ layers: only('uniqueConstraint') });
    const first = await pay({ orderNo, caller: newSession(), channel: 'browser' }, testPayOptions());
    const second = await pay({ orderNo, caller: newSession(), channel: 'browser' }, testPayOptions());
    expect(second).toMatchObject({ kind: 'duplicate', answeredBy: 'uniqueConstraint' });
    if (first.kind === 'completed' && second.kind === 'duplicate') expect(second.outcome).toEqual(first.outcome);
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('with no layer, the second request charges again', async () => {
    const orderNo = await newOrder({ layers: ALL_OFF });
    await pay({ orderNo, caller: newSession(), channel: 'browser' }, testPayOptions());
    await pay({ orderNo, caller: newSession(), channel: 'browser' }, testPayOptions());
    expect(await chargeCount(orderNo)).toBe(2);
  });
});

describe('detail 3: when to release the claim', () => {
  const api = (orderNo: string, key: string) =>
    ({ orderNo, caller: clientScope('detail-3'), channel: 'api', idempotencyKey: key, amountCents: 4200 }) as const;

  it('a failure before the charge releases every claim, and the retry succeeds', async () => {
    const orderNo = await newOrder({ layers: ALL_ON, faults: { bankFailure: 'error' } });
    const first = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(first.kind).toBe('failed_retryable');
    expect((await orderRow(orderNo)).status).toBe('PENDING');
    expect(await chargeCount(orderNo)).toBe(0);

    await setOrderLab(orderNo, { layers: ALL_ON, faults: { bankFailure: 'none' } }); // the bank recovers
    const retry = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(retry.kind).toBe('completed');
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('a decline is final: the retry gets the same decline, and nothing is charged', async () => {
    const orderNo = await newOrder({ layers: ALL_ON, faults: { bankFailure: 'decline' } });
    const first = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(first).toMatchObject({ kind: 'completed', outcome: { status: 'DECLINED' } });
    await setOrderLab(orderNo, { layers: ALL_ON, faults: { bankFailure: 'none' } });
    const retry = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(retry).toMatchObject({ kind: 'duplicate', outcome: { status: 'DECLINED' } });
    expect(await chargeCount(orderNo)).toBe(0);
  });

  it('a crash after the charge keeps the claim: a quick retry is "in progress", never a second charge', async () => {
    const orderNo = await newOrder({ layers: ALL_ON, faults: { crashAfterCharge: true } });
    await expect(pay(api(orderNo, `k-${orderNo}`), testPayOptions())).rejects.toThrow(SimulatedCrash);
    expect(await chargeCount(orderNo)).toBe(1);

    await setOrderLab(orderNo, { layers: ALL_ON, faults: {} });
    const retry = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(retry).toMatchObject({ kind: 'in_progress', answeredBy: 'requestKey' });
    const another = await pay(api(orderNo, `other-${orderNo}`), testPayOptions());
    expect(another).toMatchObject({ kind: 'in_progress', answeredBy: 'stateMachine' });
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('a crash after the claim: once the lease runs out, a retry proceeds and gets the one charge', async () => {
    const claims = { leaseMs: 300 };
    const orderNo = await newOrder({ layers: ALL_ON, faults: { crashAfterCharge: true }, claims });
    await expect(pay(api(orderNo, `k-${orderNo}`), testPayOptions())).rejects.toThrow(SimulatedCrash);
    const [charge] = await (await import('./bank.ts')).listCharges(orderNo);

    await setOrderLab(orderNo, { layers: ALL_ON, faults: {}, claims });
    await sleep(claims.leaseMs + 100);
    const retry = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(retry).toMatchObject({ kind: 'duplicate', outcome: { status: 'PAID', chargeId: charge?.id } });
    expect(await chargeCount(orderNo)).toBe(1);
    expect((await orderRow(orderNo)).status).toBe('PAID');
    // And the key now replays it.
    const again = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(again).toMatchObject({ kind: 'duplicate', answeredBy: 'requestKey', outcome: { chargeId: charge?.id } });
  });

  it('the bank timed out after charging: the request asks it at once and answers with the charge', async () => {
    const orderNo = await newOrder({ layers: ALL_ON, faults: { bankTimeoutAfterCharge: true } });
    const first = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(first).toMatchObject({ kind: 'completed', outcome: { status: 'PAID' } });
    expect((await orderRow(orderNo)).status).toBe('PAID');
    const again = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect(again).toMatchObject({ kind: 'duplicate', answeredBy: 'requestKey', existing: false });
    expect(await chargeCount(orderNo)).toBe(1);
  });

  for (const [name, layers] of [
    ['all layers', ALL_ON],
    ['layer 2 alone', only('requestKey')],
    ['layer 3 alone', only('stateMachine')],
  ] as const) {
    it(`a charge that lands after the timeout (${name}): in doubt, then settled by asking the bank again`, async () => {
      const orderNo = await newOrder({ layers, faults: { bankLateChargeMs: 300 } });
      const first = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
      expect(first).toMatchObject({ kind: 'in_progress', answeredBy: 'bank' });
      if (layers.stateMachine) expect((await orderRow(orderNo)).status).toBe('UNKNOWN');
      await sleep(400); // the charge has landed

      await setOrderLab(orderNo, { layers, faults: {} });
      const retry = await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
      expect(retry).toMatchObject({ kind: 'duplicate', outcome: { status: 'PAID' }, existing: false });
      expect(await chargeCount(orderNo)).toBe(1);
    });
  }

  it('a retry of an intent in doubt keeps its key in doubt, and later gets the payment as its own (201)', async () => {
    // Without layer 5, so the retry is told to wait by the database, not sent on to the bank's key.
    const layers = only('requestKey', 'stateMachine', 'uniqueConstraint');
    // The charge lands 2.5 s late: time enough for the retry below to come first even on a loaded machine
    // (1 s was not, beside a second npm test and a compiler).
    const orderNo = await newOrder({ layers, faults: { bankLateChargeMs: 2_500 }, claims: { leaseMs: 5_000 } });
    const request = api(orderNo, `k-${orderNo}`);
    expect(await pay(request, testPayOptions())).toMatchObject({ kind: 'in_progress', answeredBy: 'bank' });
    // At once: the charge has not landed. The retry takes the key over, is told to wait, and gives it back
    // in doubt (before, it deleted the key, and the payment later answered as another intent's, 200).
    expect(await pay(request, testPayOptions())).toMatchObject({ kind: 'in_progress' });
    const record = JSON.parse((await getRedis().get(requestKeyName(request.caller, `k-${orderNo}`))) ?? '{}');
    expect(record).toMatchObject({ state: 'unknown', owner: null });
    await sleep(2_600);
    // The background reconciler's sweep settles the order; the key is untouched. Its sweep of this order only: the
    // database is shared, and a sweep of every order takes over the race explorer's claims mid-schedule (their
    // lease is 100 ms of a clock of their own; once 200 ms of real time behind, they look abandoned).
    await reconcileStalePayments({ orderNos: [orderNo] });
    const retry = await pay(request, testPayOptions());
    expect(retry).toMatchObject({ kind: 'duplicate', existing: false, outcome: { status: 'PAID' } });
    expect(await pay(request, testPayOptions())).toMatchObject({
      kind: 'duplicate',
      answeredBy: 'requestKey',
      existing: false,
    });
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('the background reconciler settles unknown payments nobody retries', async () => {
    const orderNo = await newOrder({ layers: ALL_ON, faults: { bankLateChargeMs: 300 } });
    await pay(api(orderNo, `k-${orderNo}`), testPayOptions());
    expect((await orderRow(orderNo)).status).toBe('UNKNOWN');
    await sleep(400);
    await reconcileStalePayments({ orderNos: [orderNo] }); // this order's only, as above
    const row = await orderRow(orderNo);
    expect(row.status).toBe('PAID');
    expect(row.chargeId).toMatch(/^ch_/);
  });
});

describe('fencing: an attempt that stalls past its lease', () => {
  it('does not charge once another attempt has taken its abandoned claim over', async () => {
    const orderNo = await newOrder({ layers: only('stateMachine'), claims: { leaseMs: 300 } });
    // The first attempt claims the order, then stalls (a long pause) before calling the bank, until the second has
    // paid.
    const hold = holdAt('pay.beforeBank');
    const stalled = pay({ orderNo, caller: newSession(), channel: 'browser' }, testPayOptions({ at: hold.at }));
    await hold.reached;
    await sleep(500); // its claim is older than the lease now: abandoned, as far as anyone can tell
    const second = await pay({ orderNo, caller: newSession(), channel: 'browser' }, testPayOptions());
    hold.release();
    expect(second.kind).toBe('completed'); // it took the claim over; the bank never saw the first: it paid
    expect(await stalled).toMatchObject({ kind: 'in_progress', takenOver: true }); // it woke up, saw the claim was gone, stopped
    expect(await chargeCount(orderNo)).toBe(1);
  });
});

describe('an attempt that lost its key while away, but not its order', () => {
  it('gives its order claim back when it stops: the next retry pays at once, not a lease later', async () => {
    const orderNo = await newOrder({ layers: ALL_ON, claims: { leaseMs: 1_000 } });
    const asked = {
      orderNo,
      caller: clientScope(`lost-key-${orderNo}`),
      channel: 'api' as const,
      amountCents: 4_200,
      idempotencyKey: `lost-key-${orderNo}`,
    };
    // One clock, moved by hand from now (a sweep of every order, beside this file, judges claims by the real one). The
    // first attempt claims its key at +0 and the order at +400 (a busy machine between the two statements), then
    // pauses before the bank until it is woken.
    const start = Date.now();
    let clock = start;
    const now = () => clock;
    const hold = holdAt('pay.beforeBank', (point) => {
      if (point === 'order.claim') clock = start + 400;
    });
    const first = pay(asked, testPayOptions({ now, at: hold.at }));
    await hold.reached;
    // At +1,300 the key's lease has run out and the order's claim's has not: the retry takes the key over, finds the
    // order held, and is told "in progress" (the key kept in doubt: the first may still charge).
    clock = start + 1_300;
    expect(await pay(asked, testPayOptions({ now }))).toMatchObject({
      kind: 'in_progress',
      answeredBy: 'stateMachine',
    });
    // The first wakes at +2,900: it renews the order's claim (still its own), then finds its key taken over, and
    // stops before the bank. Nothing moved: the order is free again (not held for another lease by an attempt that
    // has answered).
    clock = start + 2_900;
    hold.release();
    expect(await first).toMatchObject({ kind: 'in_progress', answeredBy: 'requestKey', takenOver: true });
    expect((await orderRow(orderNo))?.status).toBe('PENDING');
    // The client asks again at once: it pays, once.
    expect((await pay(asked, testPayOptions({ now }))).kind).toBe('completed');
    expect(await chargeCount(orderNo)).toBe(1);
  });
});

describe('an attempt whose key cannot be renewed after a pause (its store fails)', () => {
  /** An API payment of a new order, every layer on, with a 1 s lease. */
  async function apiPayment(name: string) {
    const orderNo = await newOrder({ layers: ALL_ON, claims: { leaseMs: 1_000 } });
    const caller = clientScope(`${name}-${orderNo}`);
    return { orderNo, caller, channel: 'api' as const, amountCents: 4_200, idempotencyKey: `${name}-${orderNo}` };
  }
  const unreachable = new Error('Connection is closed.');

  it('gives its order claim back and fails retryably: nothing moved, and the retry pays at once', async () => {
    const asked = await apiPayment('key-unrenewed');
    // Away past half its lease, the attempt renews its claims, the innermost first: the order's renewal succeeds,
    // then the key's store fails (as Redis unreachable would: the race point in the key's renewal throws what the
    // client would).
    const { settled, now } = await awayPastHalfLease(
      (clock) => pay(asked, testPayOptions(clock)),
      (point) => {
        if (point === 'key.renew') throw unreachable;
      },
    );
    // The request fails (a 503 on the API), before the bank: the order is free again, not held for a lease by an
    // attempt that has answered, and so is the key (its store answers again).
    await expect(settled).rejects.toBe(unreachable);
    expect((await orderRow(asked.orderNo))?.status).toBe('PENDING');
    expect((await pay(asked, testPayOptions({ now }))).kind).toBe('completed');
    expect(await chargeCount(asked.orderNo)).toBe(1);
  });

  it('with the key’s store still down as the key is given back: the order is free, and the first error is thrown', async () => {
    const asked = await apiPayment('key-down');
    const { settled } = await awayPastHalfLease(
      (clock) => pay(asked, testPayOptions(clock)),
      (point) => {
        if (point === 'key.renew') throw unreachable;
        if (point === 'key.release') throw new Error('Connection is closed, still.');
      },
    );
    // The renewal's error, not the release's that came after it: the release failing is logged, and the key lives
    // out its lease.
    await expect(settled).rejects.toBe(unreachable);
    expect((await orderRow(asked.orderNo))?.status).toBe('PENDING');
  });
});

describe('the walk: a payment passes through each defence once, the bank inside them all', () => {
  // The async stack at a point of the payment (V8 keeps the frames of the functions awaiting it): which
  // defences' guards the payment is inside there. A claim's end (complete, record) is reached from inside the
  // same guard that made the claim and still held it at the bank, not by the pipeline calling back in.
  // A guard's frame: `guard`, or the function its body is (layer 2's `guardKey`, shared by every intent's key).
  const DEFENCES = ['request-key', 'order-claim'] as const;
  const guardsIn = (stack: string) =>
    DEFENCES.filter((folder) => new RegExp(`\\bguard\\w* \\(.*defences/${folder}/defence\\.ts`).test(stack));

  it('the bank is called inside every guard that holds a claim, and each claim ends inside its guard', async () => {
    const orderNo = await newOrder({ layers: ALL_ON });
    const caller = newSession();
    const { token } = await issueCheckoutToken(orderNo, caller, 300);
    const stacks = new Map<string, string>();
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 200;
    try {
      const at = async (point: string) => {
        stacks.set(point, new Error().stack ?? '');
      };
      const result = await pay(
        { orderNo, caller, channel: 'api', checkoutToken: token, idempotencyKey: `walk-${orderNo}` },
        testPayOptions({ at }),
      );
      expect(result.kind).toBe('completed');
    } finally {
      Error.stackTraceLimit = limit;
    }
    expect(guardsIn(stacks.get('key.claim') ?? '')).toEqual(['request-key']);
    expect(guardsIn(stacks.get('order.claim') ?? '')).toEqual(['request-key', 'order-claim']);
    expect(guardsIn(stacks.get('pay.bank') ?? '')).toEqual(['request-key', 'order-claim']);
    expect(guardsIn(stacks.get('order.record') ?? '')).toEqual(['request-key', 'order-claim']);
    expect(guardsIn(stacks.get('key.complete') ?? '')).toEqual(['request-key']);
  });
});

describe('Redis loses its memory between two duplicates', () => {
  for (const layers of [ALL_ON, only('requestKey', 'uniqueConstraint')]) {
    const guard = layers.stateMachine ? 'stateMachine' : 'uniqueConstraint';
    it(`still one charge: ${guard} answers with the first outcome`, async () => {
      const orderNo = await newOrder({ layers });
      const caller = clientScope('flush');
      const first = await pay({ orderNo, caller, channel: 'api', idempotencyKey: `same-${orderNo}` }, testPayOptions());
      await forgetEverythingInRedis();
      const second = await pay(
        { orderNo, caller, channel: 'api', idempotencyKey: `same-${orderNo}` },
        testPayOptions(),
      );
      expect(second).toMatchObject({ kind: 'duplicate', answeredBy: guard });
      if (first.kind === 'completed' && second.kind === 'duplicate') expect(second.outcome).toEqual(first.outcome);
      expect(await chargeCount(orderNo)).toBe(1);
    });
  }
});

describe('detail 2: every answer for a key is the first answer, exactly', () => {
  it('a second key for a paid order is told "already paid" (existing), and its replay says the same', async () => {
    const orderNo = await newOrder({ layers: ALL_ON });
    const caller = clientScope('second-key');
    await pay({ orderNo, caller, channel: 'api', idempotencyKey: 'first' }, testPayOptions());
    const second = await pay({ orderNo, caller, channel: 'api', idempotencyKey: 'second' }, testPayOptions());
    expect(second).toMatchObject({ kind: 'duplicate', answeredBy: 'stateMachine', existing: true });
    const replay = await pay({ orderNo, caller, channel: 'api', idempotencyKey: 'second' }, testPayOptions());
    expect(replay).toMatchObject({ kind: 'duplicate', answeredBy: 'requestKey', existing: true });
    if (second.kind === 'duplicate' && replay.kind === 'duplicate') expect(replay.outcome).toEqual(second.outcome);
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('the bank’s key (layer 5) answering a second key is kept as "existing" too', async () => {
    const orderNo = await newOrder({ layers: only('requestKey', 'bankKey') });
    const caller = clientScope('bank-key');
    await pay({ orderNo, caller, channel: 'api', idempotencyKey: 'first' }, testPayOptions());
    const second = await pay({ orderNo, caller, channel: 'api', idempotencyKey: 'second' }, testPayOptions());
    expect(second).toMatchObject({ kind: 'duplicate', answeredBy: 'bankKey', existing: true });
    const replay = await pay({ orderNo, caller, channel: 'api', idempotencyKey: 'second' }, testPayOptions());
    expect(replay).toMatchObject({ kind: 'duplicate', answeredBy: 'requestKey', existing: true });
  });

  it('a retry carrying the same key and the same spent token gets the first outcome, not "already submitted"', async () => {
    const orderNo = await newOrder({ layers: ALL_ON });
    const caller = clientScope('mobile');
    const { token } = await issueCheckoutToken(orderNo, caller, 300);
    const request = { orderNo, caller, channel: 'api', idempotencyKey: 'tap', checkoutToken: token } as const;
    const first = await pay(request, testPayOptions());
    expect(first.kind).toBe('completed');
    const retry = await pay(request, testPayOptions());
    expect(retry).toMatchObject({ kind: 'duplicate', answeredBy: 'requestKey', existing: false });
    // The key with another amount: the key's mismatch, not the token's refusal.
    expect((await pay({ ...request, amountCents: 1 }, testPayOptions())).kind).toBe('mismatch');
    // A key that holds nothing: the spent token is refused.
    expect((await pay({ ...request, idempotencyKey: 'other' }, testPayOptions())).kind).toBe('already_submitted');
    // Layer 2 off: nothing to look up; the token refuses.
    await setOrderLab(orderNo, { layers: only('token') });
    expect((await pay(request, testPayOptions())).kind).toBe('already_submitted');
    expect(await chargeCount(orderNo)).toBe(1);
  });
});

describe('misuse', () => {
  it('a key reused with a different amount is a mismatch, and charges nothing more', async () => {
    const orderNo = await newOrder({ layers: ALL_ON });
    const caller = clientScope('reuse');
    await pay({ orderNo, caller, channel: 'api', idempotencyKey: 'k', amountCents: 4200 }, testPayOptions());
    const reused = await pay(
      { orderNo, caller, channel: 'api', idempotencyKey: 'k', amountCents: 100 },
      testPayOptions(),
    );
    expect(reused.kind).toBe('mismatch');
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('a wrong amount on a fresh key is refused and leaves the key free', async () => {
    const orderNo = await newOrder({ layers: ALL_ON });
    const caller = clientScope('amount');
    const wrong = await pay({ orderNo, caller, channel: 'api', idempotencyKey: 'k', amountCents: 1 }, testPayOptions());
    expect(wrong).toMatchObject({ kind: 'amount_mismatch', orderAmountCents: 4200 });
    const right = await pay(
      { orderNo, caller, channel: 'api', idempotencyKey: 'k2', amountCents: 4200 },
      testPayOptions(),
    );
    expect(right.kind).toBe('completed');
  });

  it('a token is refused when it is another session’s, forged, reused or expired', async () => {
    const orderNo = await newOrder({ layers: only('token') });
    const alice = newSession();
    const bob = newSession();
    const { token } = await issueCheckoutToken(orderNo, alice, 300);

    expect((await pay({ orderNo, caller: bob, channel: 'browser', checkoutToken: token })).kind).toBe(
      'already_submitted',
    );
    const forged = randomBytes(32).toString('base64url');
    expect((await pay({ orderNo, caller: alice, channel: 'browser', checkoutToken: forged })).kind).toBe(
      'already_submitted',
    );
    expect((await pay({ orderNo, caller: alice, channel: 'browser' })).kind).toBe('already_submitted');
    expect(await chargeCount(orderNo)).toBe(0);

    expect((await pay({ orderNo, caller: alice, channel: 'browser', checkoutToken: token })).kind).toBe('completed');
    expect((await pay({ orderNo, caller: alice, channel: 'browser', checkoutToken: token })).kind).toBe(
      'already_submitted',
    );

    const other = await newOrder({ layers: only('token') });
    const short = await issueCheckoutToken(other, alice, 1);
    await sleep(1_100);
    expect((await pay({ orderNo: other, caller: alice, channel: 'browser', checkoutToken: short.token })).kind).toBe(
      'already_submitted',
    );
    expect(await chargeCount(orderNo)).toBe(1);
    expect(await chargeCount(other)).toBe(0);
  });

  it('an unknown order is refused', async () => {
    const result = await pay({ orderNo: 'ord_0000000000000000', caller: newSession(), channel: 'api' });
    expect(result.kind).toBe('order_not_found');
  });
});
