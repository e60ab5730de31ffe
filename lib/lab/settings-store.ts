import 'server-only';
// The lab's global settings live in Redis, so every app instance (and every open tab) sees the same
// switches without a restart. An order may carry its own settings (given at creation), which win.
import { getDb } from '../db.ts';
import { env } from '../env.ts';
import { getRedis } from '../redis.ts';
import {
  DEFAULT_LAB_SETTINGS,
  type LabSettings,
  type LabSettingsPatch,
  LabSettingsPatchSchema,
  mergeLabSettings,
  parseStoredLabSettings,
} from './settings.ts';

const KEY = 'lab:config';

// Every payment reads the settings; a quarter of a second of staleness saves a Redis round trip on most of
// them, and a switch still reaches every instance and every tab well within a human's reaction time.
const CACHE_MS = 250;
let cached: { settings: LabSettings; at: number } | undefined;

/** The global settings. With the lab turned off (LAB_ENABLED=false): every defence on, no fault, always. */
export async function getLabSettings(): Promise<LabSettings> {
  if (!env().LAB_ENABLED) return DEFAULT_LAB_SETTINGS;
  if (cached && performance.now() - cached.at < CACHE_MS) return cached.settings;
  const settings = parseStoredLabSettings(await getRedis().get(KEY));
  cached = { settings, at: performance.now() };
  return settings;
}

/** The settings an order runs with: the global ones, overridden by the order's own (unless the lab is off). */
export function settingsForOrder(global: LabSettings, orderLab: unknown): LabSettings {
  if (!env().LAB_ENABLED) return DEFAULT_LAB_SETTINGS;
  const own = LabSettingsPatchSchema.safeParse(orderLab ?? {});
  return mergeLabSettings(global, own.success ? own.data : undefined);
}

/** Merges a partial change into the global settings and returns the whole. */
export async function updateLabSettings(patch: LabSettingsPatch): Promise<LabSettings> {
  // Last writer wins for the lab's switches: they are set by hand, one teacher at a time.
  cached = undefined;
  const next = mergeLabSettings(await getLabSettings(), patch);
  await getRedis().set(KEY, JSON.stringify(next));
  cached = { settings: next, at: performance.now() };
  return next;
}

export async function resetLabSettings(): Promise<LabSettings> {
  await getRedis().set(KEY, JSON.stringify(DEFAULT_LAB_SETTINGS));
  cached = { settings: DEFAULT_LAB_SETTINGS, at: performance.now() };
  return DEFAULT_LAB_SETTINGS;
}

/** The settings one order runs with: the global ones, overridden by the order's own. */
export async function getOrderLabSettings(orderNo: string): Promise<LabSettings | undefined> {
  const [global, order] = await Promise.all([
    getLabSettings(),
    getDb().order.findUnique({ where: { orderNo }, select: { lab: true } }),
  ]);
  return order ? settingsForOrder(global, order.lab) : undefined;
}
