import { describe, expect, it } from 'vitest';
import { DEFAULT_LAB_SETTINGS, LabSettingsPatchSchema, mergeLabSettings, parseStoredLabSettings } from './settings.ts';

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
});
