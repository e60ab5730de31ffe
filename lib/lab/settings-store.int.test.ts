// The lab's global settings in the real Redis (this worker's own logical database).
import { describe, expect, it } from 'vitest';
import { createOrder } from '../payments/orders.ts';
import { getRedis } from '../redis.ts';
import { sessionScope } from '../session.ts';
import {
  getLabSettings,
  getOrderLabSettings,
  resetLabSettings,
  updateLabSettings,
  updateMyLabSettings,
} from './settings-store.ts';

describe('the lab settings store', () => {
  it('keeps every one of many concurrent changes (each is merged in one step inside Redis)', async () => {
    await getRedis().del('lab:config');
    await Promise.all([
      updateLabSettings({ faults: { stallBeforeBankMs: 2_500 } }),
      updateLabSettings({ faults: { bankLateChargeMs: 1_500 } }),
      updateLabSettings({ faults: { crashBeforeCharge: true } }),
      updateLabSettings({ claims: { leaseMs: 1_000 } }),
      updateLabSettings({ layers: { token: false } }),
      updateLabSettings({ layers: { bankKey: false } }),
      updateLabSettings({ gateway: { retries: 2 } }),
    ]);
    const settings = await updateLabSettings({});
    expect(settings.faults).toMatchObject({
      stallBeforeBankMs: 2_500,
      bankLateChargeMs: 1_500,
      crashBeforeCharge: true,
    });
    expect(settings.claims.leaseMs).toBe(1_000);
    expect(settings.layers).toMatchObject({ token: false, bankKey: false, stateMachine: true });
    expect(settings.gateway.retries).toBe(2);
    expect(await resetLabSettings()).toMatchObject({ faults: { stallBeforeBankMs: 0 }, layers: { token: true } });
    expect((await getLabSettings()).claims.leaseMs).toBeGreaterThan(0);
  });

  it('gives an order its owner’s lab (what the payment and the receipt worker run with), then the order’s own', async () => {
    const attendee = sessionScope(`attendee-${Date.now()}`);
    await updateMyLabSettings(attendee, { faults: { receiptCrashBeforeAck: true } });
    const mine = await createOrder({}, attendee);
    const someoneElses = await createOrder({}, sessionScope(`other-${Date.now()}`));
    const ownSettings = await createOrder({ lab: { faults: { receiptCrashBeforeAck: false } } }, attendee);
    expect((await getOrderLabSettings(mine.orderNo))?.faults.receiptCrashBeforeAck).toBe(true);
    expect((await getOrderLabSettings(someoneElses.orderNo))?.faults.receiptCrashBeforeAck).toBe(false);
    expect((await getOrderLabSettings(ownSettings.orderNo))?.faults.receiptCrashBeforeAck).toBe(false);
  });
});
