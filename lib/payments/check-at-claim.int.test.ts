// An API payment with the lab off is not read before the defences: the database's claim checks that the caller
// may pay the order, at the amount it states (pay.ts, `checkAtClaim`). What that must still refuse, on real
// PostgreSQL and Redis: another caller's order, another amount, an order that does not exist, and, on the
// recovery path, a duplicate of another caller's request learning what the order's owner was charged.
import { describe, expect, it } from 'vitest';
import { chargeCount, orderRow, testPayOptions, withTheLabOff } from '../../test/payments.ts';
import type { RacePoint } from '../defences/race-points.ts';
import { requestKeyName } from '../defences/request-key/record.ts';
import { getRedis } from '../redis.ts';
import { type CallerScope, clientScope } from '../session.ts';
import { createOrder, joinOrder } from './orders.ts';
import { pay } from './pay.ts';
import { policySource } from './policy.ts';

withTheLabOff();

const owner = () => clientScope(`owner-${Math.random().toString(36).slice(2)}`);
const api = (orderNo: string, caller: CallerScope, amountCents: number, idempotencyKey = 'k') =>
  pay({ orderNo, caller, channel: 'api', idempotencyKey, amountCents }, testPayOptions());
const keyHeld = async (caller: CallerScope, key: string) =>
  (await getRedis().exists(requestKeyName(caller, key))) === 1;

describe('an API payment checked at its claim (the lab off)', () => {
  it('its owner pays it: one charge', async () => {
    const alice = owner();
    const { orderNo } = await createOrder({}, alice);
    expect(policySource().forCaller).toBeDefined();
    expect((await api(orderNo, alice, 4_200)).kind).toBe('completed');
    expect((await api(orderNo, alice, 4_200)).kind).toBe('duplicate');
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('another caller is told there is no such order; nothing is written, and its key is given back', async () => {
    const { orderNo } = await createOrder({}, owner());
    const mallory = owner();
    expect((await api(orderNo, mallory, 4_200)).kind).toBe('order_not_found');
    expect(await chargeCount(orderNo)).toBe(0);
    expect((await orderRow(orderNo))?.status).toBe('PENDING');
    expect(await keyHeld(mallory, 'k')).toBe(false);
  });

  it('a session the owner let in pays it', async () => {
    const alice = owner();
    const { orderNo, checkoutUrl } = await createOrder({}, alice);
    const bob = owner();
    expect(await joinOrder(orderNo, new URL(checkoutUrl, 'http://x').searchParams.get('join') ?? '', bob)).toBe(true);
    expect((await api(orderNo, bob, 4_200)).kind).toBe('completed');
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('another amount is refused, saying the order’s, and charges nothing', async () => {
    const alice = owner();
    const { orderNo } = await createOrder({}, alice);
    expect(await api(orderNo, alice, 1)).toMatchObject({ kind: 'amount_mismatch', orderAmountCents: 4_200 });
    expect(await chargeCount(orderNo)).toBe(0);
    expect((await orderRow(orderNo))?.status).toBe('PENDING');
    expect(await keyHeld(alice, 'k')).toBe(false);
    expect((await api(orderNo, alice, 4_200, 'k2')).kind).toBe('completed');
  });

  it('an order that does not exist is refused', async () => {
    expect((await api('ord_0000000000000000', owner(), 4_200)).kind).toBe('order_not_found');
  });

  it('a duplicate of another caller’s request, while the first holds its key, is not told the owner’s payment', async () => {
    const alice = owner();
    const { orderNo } = await createOrder({}, alice);
    expect((await api(orderNo, alice, 4_200)).kind).toBe('completed');
    // Mallory's first request holds its key (paused before the order's claim); its duplicate finds the key held,
    // and layer 2 asks the database whether the order is settled: it is, but not for Mallory.
    const mallory = owner();
    let arrived!: () => void;
    const atClaim = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let go!: () => void;
    const held = new Promise<void>((resolve) => {
      go = resolve;
    });
    const at = async (point: RacePoint) => {
      if (point !== 'order.claim') return;
      arrived();
      await held;
    };
    const request = { orderNo, caller: mallory, channel: 'api' as const, idempotencyKey: 'm', amountCents: 4_200 };
    const first = pay(request, testPayOptions({ at }));
    await atClaim;
    const duplicate = await pay(request, testPayOptions());
    go();
    expect(duplicate.kind).toBe('in_progress');
    expect((await first).kind).toBe('order_not_found');
    expect(await chargeCount(orderNo)).toBe(1);
  });
});
