import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LAB_SETTINGS,
  FAULT_REACH,
  FaultsSchema,
  LabSettingsPatchSchema,
  mergeLabSettings,
  parseStoredLabSettings,
  SHARED_FAULTS,
} from './settings.ts';

describe('lab settings', () => {
  it('merges a partial patch over the base, layer by layer', () => {
    const merged = mergeLabSettings(DEFAULT_LAB_SETTINGS, { layers: { token: false }, faults: { bankLatencyMs: 500 } });
    expect(merged.layers).toEqual({ ...DEFAULT_LAB_SETTINGS.layers, token: false });
    expect(merged.faults).toEqual({ ...DEFAULT_LAB_SETTINGS.faults, bankLatencyMs: 500 });
  });

  it('rejects unknown switches and wrong types, naming the field', () => {
    const result = LabSettingsPatchSchema.safeParse({ layers: { tokn: false }, faults: { bankLatencyMs: -1 } });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((issue) => issue.path.join('.'));
    expect(paths).toContain('layers');
    expect(paths).toContain('faults.bankLatencyMs');
  });

  it('falls back to the defaults for missing or corrupt stored settings', () => {
    expect(parseStoredLabSettings(null)).toEqual(DEFAULT_LAB_SETTINGS);
    expect(parseStoredLabSettings('{not json')).toEqual(DEFAULT_LAB_SETTINGS);
    expect(parseStoredLabSettings('{"layers":{"token":false}}').layers.token).toBe(false);
  });

  it('says of every fault in the schema what it reaches; the worker’s crash stops a shared process', () => {
    const faults = Object.keys(FaultsSchema.shape);
    expect(Object.keys(FAULT_REACH).sort()).toEqual([...faults].sort());
    // The app's crashes stop an attendee's attempt alone in a room (lib/lab/policy.ts); the worker has no such.
    expect(SHARED_FAULTS).toEqual(['receiptCrashBeforeAck']);
  });
});
