// The lab's global settings in the real Redis (this worker's own logical database).
import { describe, expect, it } from 'vitest';
import { getRedis } from '../redis.ts';
import { getLabSettings, resetLabSettings, updateLabSettings } from './settings-store.ts';

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
});
