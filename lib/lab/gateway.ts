// What the lab shows of the cluster's gateway: the nginx configuration it runs with, as the launcher
// (scripts/lib/launcher.ts) last wrote and reloaded it. Pure: shared by the launcher, the route and the page.
import { z } from 'zod';
import { GatewaySchema } from './settings.ts';

/** Kept in Redis while the cluster runs (refreshed every second, gone a few seconds after it stops). */
export const GATEWAY_RECORD_KEY = 'lab:gateway';
export const GATEWAY_RECORD_TTL_MS = 5_000;

export const GatewayRecordSchema = z.object({
  /** The gateway's program and version, e.g. "nginx/1.22.1". */
  server: z.string(),
  /** Where the configuration is, relative to the project. */
  file: z.string(),
  config: z.string(),
  /** The settings the configuration was written from. */
  settings: GatewaySchema,
  /** When nginx was last (re)loaded with it (ms since the epoch). */
  reloadedAt: z.number(),
});
export type GatewayRecord = z.infer<typeof GatewayRecordSchema>;

/** GET /api/lab/gateway: the running gateway, or none (`npm run demo` has no gateway). */
export type GatewayView = ({ running: true } & GatewayRecord) | { running: false };
