// The lab's policy told without reading the order (policy.ts's `forCaller`): a service's payment of an order made
// without settings of its own runs under the global lab and is checked at its claim, with nothing read before it;
// any other order is read first, and one with settings of its own is paid under them. On real PostgreSQL and Redis.
import { describe, expect, it } from 'vitest';
import { chargeCount, newOrder, setOrderLab, testPayOptions } from '../../test/payments.ts';
import { getPool } from '../db.ts';
import { orderFactsKey } from '../payments/order-facts.ts';
import { newOrderNo } from '../payments/order-no.ts';
import { createOrder } from '../payments/orders.ts';
import { pay } from '../payments/pay.ts';
import { policySource } from '../payments/policy.ts';
import { getRedis } from '../redis.ts';
import { type CallerScope, clientScope, sessionScope } from '../session.ts';
import { resetLabSettings, updateLabSettings } from './settings-store.ts';

const service = () => clientScope(`service-${Math.random().toString(36).slice(2)}`);
const api = (orderNo: string, caller: CallerScope, idempotencyKey: string) =>
  pay({ orderNo, caller, channel: 'api', idempotencyKey, amountCents: 4_200 }, testPayOptions());

describe('the lab’s policy for a service’s payment', () => {
  it('is told for an order made without settings of its own, and nothing else', async () => {
    const caller = service();
    const plain = (await createOrder({}, caller)).orderNo;
    const ownSettings = await newOrder({ answers: { duplicate: 'error' } });
    const source = policySource();
    expect(await source.forCaller?.(caller, plain)).toBeDefined();
    // A browser's session (its owner's lab may be an attendee's), an order with settings of its own, a number
    // of an earlier version: read first.
    expect(await source.forCaller?.(sessionScope('someone'), plain)).toBeUndefined();
    expect(await source.forCaller?.(caller, ownSettings)).toBeUndefined();
    expect(await source.forCaller?.(caller, 'ord_0123456789abcdef')).toBeUndefined();
  });

  it('reads nothing of an order made without settings of its own before claiming it', async () => {
    const caller = service();
    const { orderNo } = await createOrder({}, caller);
    // Without its facts in Redis, a payment that read the order first would read its row.
    await getRedis().del(orderFactsKey(orderNo));
    let statements = 0;
    const counted = () => statements++;
    getPool().on('acquire', counted);
    try {
      expect((await api(orderNo, caller, 'k')).kind).toBe('completed');
    } finally {
      getPool().off('acquire', counted);
    }
    // The claim, the bank's charge, the record: each on a connection of its own.
    expect(statements).toBe(3);
  });

  it('pays an order with settings of its own under them', async () => {
    const caller = service();
    const orderNo = await newOrder({ answers: { duplicate: 'error' } });
    expect((await api(orderNo, caller, 'first')).kind).toBe('completed');
    // Another key: layer 3 stops it, and the order's own settings say a duplicate is told an error.
    expect((await api(orderNo, caller, 'second')).kind).toBe('duplicate_refused');
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('reads the order first under the release rule that never gives a key back', async () => {
    await updateLabSettings({ claims: { release: 'never' } });
    try {
      // An order that does not exist: told so each time, not "in progress" by the key its first request kept.
      const missing = newOrderNo(false);
      const caller = service();
      expect((await api(missing, caller, 'k')).kind).toBe('order_not_found');
      expect((await api(missing, caller, 'k')).kind).toBe('order_not_found');
    } finally {
      await resetLabSettings();
    }
  });

  it('follows the global lab: a change of its switches reaches the next payment', async () => {
    const caller = service();
    const orderNo = newOrderNo(false);
    const source = policySource();
    const before = await source.forCaller?.(caller, orderNo);
    expect(before?.layers.bankKey).toBe(true);
    await updateLabSettings({ layers: { bankKey: false } });
    try {
      const after = await source.forCaller?.(caller, orderNo);
      expect(after?.layers.bankKey).toBe(false);
    } finally {
      await resetLabSettings();
    }
    expect((await source.forCaller?.(caller, orderNo))?.layers.bankKey).toBe(true);
  });

  it('an order numbered without settings of its own cannot be given any', async () => {
    const { orderNo } = await createOrder({});
    await expect(setOrderLab(orderNo, { answers: { duplicate: 'error' } })).rejects.toThrow();
  });
});
