import 'server-only';
import type { Result } from 'ioredis';
// The lab's global settings live in Redis, so every app instance (and every open tab) sees the same
// switches without a restart. An order may carry its own settings (given at creation), which win.
import { getDb } from '../db.ts';
import { env } from '../env.ts';
import { getRedis, readLua, redisWith } from '../redis.ts';
import type { CallerScope } from '../session.ts';
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
    updateLabConfig(key: string, defaults: string, patch: string, ttlMs?: number): Result<string, Context>;
  }
}

const KEY = 'lab:config';
/** An attendee's own lab (a browser session's): the settings its orders run with, once it changed any. */
export const MINE = (session: CallerScope) => `lab:mine:${session}`;
/** An attendee's own settings live this long after their last change; then the session follows the global again. */
const MINE_TTL_MS = 7 * 24 * 3_600_000;
const UPDATE = readLua('updateLabConfig', 'lab/update-lab-config.lua', 1);

/** The defaults of this deployment: every defence on, no fault, and the lease REQUEST_KEY_LEASE_MS says. */
export function labDefaults(): LabSettings {
  return mergeLabSettings(DEFAULT_LAB_SETTINGS, { claims: { leaseMs: env().REQUEST_KEY_LEASE_MS } });
}

// Every payment reads the settings; a quarter of a second of staleness saves a Redis round trip on most of
// them, and a switch still reaches every instance and every tab well within a human's reaction time.
const CACHE_MS = 250;
// The read itself is cached, not only its result: the payments that arrive while it is under way wait for it
// instead of each sending a GET of their own (under load, dozens every time the cache expires).
let cached: { settings: Promise<LabSettings>; at: number } | undefined;

/** The global settings. With the lab turned off (LAB_ENABLED=false): every defence on, no fault, always. */
export async function getLabSettings(): Promise<LabSettings> {
  if (!env().LAB_ENABLED) return labDefaults();
  if (cached && performance.now() - cached.at < CACHE_MS) return cached.settings;
  const settings = getRedis()
    .get(KEY)
    .then((stored) => parseStoredLabSettings(stored, labDefaults()));
  const entry = { settings, at: performance.now() };
  cached = entry;
  // A failed read is not kept: the next payment asks again.
  settings.catch(() => {
    if (cached === entry) cached = undefined;
  });
  return settings;
}

/**
 * The lab a caller sees and edits: a browser session's own, once it has changed anything (each attendee of a
 * workshop has one; another's switches never reach it), else the global settings (API callers always).
 */
export async function getLabSettingsFor(caller: string | null | undefined): Promise<LabSettings> {
  if (!env().LAB_ENABLED || !caller?.startsWith('s.')) return getLabSettings();
  const [global, mine] = await Promise.all([getLabSettings(), getRedis().get(MINE(caller as CallerScope))]);
  return mine ? parseStoredLabSettings(mine, global) : global;
}

/** Merges a partial change into a session's own lab (starting from the global settings), and returns it. */
export async function updateMyLabSettings(session: CallerScope, patch: LabSettingsPatch): Promise<LabSettings> {
  const start = await getLabSettings();
  const stored = await redisWith(UPDATE).updateLabConfig(
    MINE(session),
    JSON.stringify(start),
    JSON.stringify(patch),
    MINE_TTL_MS,
  );
  return parseStoredLabSettings(stored, start);
}

/** A session's own lab back to every defence on, no fault. */
export async function resetMyLabSettings(session: CallerScope): Promise<LabSettings> {
  const defaults = labDefaults();
  await getRedis().set(MINE(session), JSON.stringify(defaults), 'PX', MINE_TTL_MS);
  return defaults;
}

/** The settings an order runs with: the global ones, overridden by the order's own (unless the lab is off). */
export function settingsForOrder(global: LabSettings, orderLab: unknown): LabSettings {
  if (!env().LAB_ENABLED) return labDefaults();
  // Most orders carry no settings of their own: nothing to parse or merge (an empty patch changes nothing).
  if (orderLab == null) return global;
  const own = LabSettingsPatchSchema.safeParse(orderLab);
  return mergeLabSettings(global, own.success ? own.data : undefined);
}

/** Merges a partial change into the global settings, in one step inside Redis, and returns the whole. */
export async function updateLabSettings(patch: LabSettingsPatch): Promise<LabSettings> {
  cached = undefined;
  const stored = await redisWith(UPDATE).updateLabConfig(KEY, JSON.stringify(labDefaults()), JSON.stringify(patch));
  const next = parseStoredLabSettings(stored, labDefaults());
  cached = { settings: Promise.resolve(next), at: performance.now() };
  return next;
}

export async function resetLabSettings(): Promise<LabSettings> {
  const defaults = labDefaults();
  await getRedis().set(KEY, JSON.stringify(defaults));
  cached = { settings: Promise.resolve(defaults), at: performance.now() };
  return defaults;
}

/** The settings one order runs with: its owner's lab (or the global one), overridden by the order's own. */
export async function getOrderLabSettings(orderNo: string): Promise<LabSettings | undefined> {
  const order = await getDb().order.findUnique({ where: { orderNo }, select: { lab: true, owner: true } });
  return order ? settingsForOrder(await getLabSettingsFor(order.owner), order.lab) : undefined;
}

/**
 * The lab's "drop the response" fault loses one answer per order, the first, as a dropped connection
 * would: the customer's retry must hear back. True for the answer to drop (SET NX: one caller wins).
 */
export async function dropsThisAnswer(orderNo: string): Promise<boolean> {
  return (await getRedis().set(`lab:dropped:${orderNo}`, '1', 'EX', 86_400, 'NX')) === 'OK';
}
