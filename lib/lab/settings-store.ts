import 'server-only';
import type { Result } from 'ioredis';
// The lab's global settings live in Redis, so every app instance (and every open tab) sees the same
// switches without a restart. An order may carry its own settings (given at creation), which win.
import { getDb } from '../db.ts';
import { env } from '../env.ts';
import { getRedis, readLua, redisWith } from '../redis.ts';
import {
  DEFAULT_LAB_SETTINGS,
  type LabSettings,
  type LabSettingsPatch,
  LabSettingsPatchSchema,
  mergeLabSettings,
  parseStoredLabSettings,
} from './settings.ts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    updateLabConfig(key: string, defaults: string, patch: string): Result<string, Context>;
  }
}

const KEY = 'lab:config';
const UPDATE = readLua('updateLabConfig', 'lab/update-lab-config.lua', 1);

/** The defaults of this deployment: every defence on, no fault, and the lease REQUEST_KEY_LEASE_MS says. */
export function labDefaults(): LabSettings {
  return mergeLabSettings(DEFAULT_LAB_SETTINGS, { claims: { leaseMs: env().REQUEST_KEY_LEASE_MS } });
}

// Every payment reads the settings; a quarter of a second of staleness saves a Redis round trip on most of
// them, and a switch still reaches every instance and every tab well within a human's reaction time.
const CACHE_MS = 250;
let cached: { settings: LabSettings; at: number } | undefined;

/** The global settings. With the lab turned off (LAB_ENABLED=false): every defence on, no fault, always. */
export async function getLabSettings(): Promise<LabSettings> {
  if (!env().LAB_ENABLED) return labDefaults();
  if (cached && performance.now() - cached.at < CACHE_MS) return cached.settings;
  const settings = parseStoredLabSettings(await getRedis().get(KEY), labDefaults());
  cached = { settings, at: performance.now() };
  return settings;
}

/** The settings an order runs with: the global ones, overridden by the order's own (unless the lab is off). */
export function settingsForOrder(global: LabSettings, orderLab: unknown): LabSettings {
  if (!env().LAB_ENABLED) return labDefaults();
  const own = LabSettingsPatchSchema.safeParse(orderLab ?? {});
  return mergeLabSettings(global, own.success ? own.data : undefined);
}

/** Merges a partial change into the global settings, in one step inside Redis, and returns the whole. */
export async function updateLabSettings(patch: LabSettingsPatch): Promise<LabSettings> {
  cached = undefined;
  const stored = await redisWith(UPDATE).updateLabConfig(KEY, JSON.stringify(labDefaults()), JSON.stringify(patch));
  const next = parseStoredLabSettings(stored, labDefaults());
  cached = { settings: next, at: performance.now() };
  return next;
}

export async function resetLabSettings(): Promise<LabSettings> {
  const defaults = labDefaults();
  await getRedis().set(KEY, JSON.stringify(defaults));
  cached = { settings: defaults, at: performance.now() };
  return defaults;
}

/** The settings one order runs with: the global ones, overridden by the order's own. */
export async function getOrderLabSettings(orderNo: string): Promise<LabSettings | undefined> {
  const [global, order] = await Promise.all([
    getLabSettings(),
    getDb().order.findUnique({ where: { orderNo }, select: { lab: true } }),
  ]);
  return order ? settingsForOrder(global, order.lab) : undefined;
}
