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

/** The global settings. With the lab turned off (LAB_ENABLED=false): every defence on, no fault, always. */
export async function getLabSettings(): Promise<LabSettings> {
  if (!env().LAB_ENABLED) return DEFAULT_LAB_SETTINGS;
  return parseStoredLabSettings(await getRedis().get(KEY));
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
  const next = mergeLabSettings(await getLabSettings(), patch);
  await getRedis().set(KEY, JSON.stringify(next));
  return next;
}

export async function resetLabSettings(): Promise<LabSettings> {
  await getRedis().set(KEY, JSON.stringify(DEFAULT_LAB_SETTINGS));
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
