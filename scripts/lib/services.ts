// The services the app needs: the servers named by DATABASE_URL / REDIS_URL, or, where unset, the
// embedded ones (a real PostgreSQL from npm, a real redis-server) on their own non-default ports.
import path from 'node:path';
import { ROOT } from './paths.ts';
import { type RunningService, startEmbeddedPostgres } from './postgres.ts';
import { startRedisServer } from './redis.ts';
import { ensureProgram, REDIS_SERVER } from './system-programs.ts';

/** An embedded server that can be stopped and started again on the same port and data (an outage). */
export type Restartable = { stop: () => Promise<void>; start: () => Promise<void> };

export type Services = {
  databaseUrl: string;
  redisUrl: string;
  started: string[];
  stop: () => Promise<void>;
  /** The servers this started (not those you configured), for the benchmark's chaos storm to restart. */
  embedded: { postgres?: Restartable; redis?: Restartable };
};

/** Holds the current server of a kind, so that a restart replaces it and the final stop stops the new one. */
function restartable(start: () => Promise<RunningService>, first: RunningService): Restartable {
  let current: RunningService | undefined = first;
  return {
    stop: async () => {
      await current?.stop();
      current = undefined;
    },
    start: async () => {
      current ??= await start();
    },
  };
}

export async function startServices(options: {
  /** Embedded data lives in <dataDir>/<profile>/ (git-ignored). */
  profile: 'demo' | 'test' | 'bench';
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** Redis is reached through Sentinel (REDIS_SENTINELS): there is none to start, and no URL (`redisUrl` is ''). */
  redisThroughSentinel?: boolean;
  postgresPort: number;
  redisPort: number;
  log: (line: string) => void;
}): Promise<Services> {
  const { profile, log } = options;
  const dataDir = path.resolve(ROOT, options.dataDir, profile);
  const stops: Array<() => Promise<void>> = [];
  const started: string[] = [];
  const embedded: Services['embedded'] = {};
  const stop = async () => {
    // Last started, first stopped.
    for (const stopOne of stops.reverse()) await stopOne().catch(() => {});
  };
  try {
    let redisUrl = options.redisUrl ?? '';
    if (!redisUrl && !options.redisThroughSentinel) {
      const binary = ensureProgram(REDIS_SERVER, log);
      const startRedis = () =>
        startRedisServer({
          binary,
          port: options.redisPort,
          dataDir: path.join(dataDir, 'redis'),
          persist: profile === 'demo',
          // The benchmark's section 1 leaves about a quarter of a million request keys (kept 24 h, as the app keeps
          // them) and orders' facts: near 256 MB, where Redis refuses writes (decision 039).
          maxMemory: profile === 'bench' ? '1gb' : undefined,
        });
      const redis = await startRedis();
      embedded.redis = restartable(startRedis, redis);
      stops.push(embedded.redis.stop);
      started.push(`Redis on 127.0.0.1:${options.redisPort}`);
      redisUrl = redis.url;
    }
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      const startPostgres = () =>
        startEmbeddedPostgres({
          dataDir: path.join(dataDir, 'postgres'),
          port: options.postgresPort,
          database: profile === 'demo' ? 'payonce' : `payonce_${profile}`,
          // The demo's and the benchmark's data are written for real (the benchmark measures commits).
          durable: profile !== 'test',
          log,
        });
      const postgres = await startPostgres();
      embedded.postgres = restartable(startPostgres, postgres);
      stops.push(embedded.postgres.stop);
      started.push(`PostgreSQL on 127.0.0.1:${options.postgresPort}`);
      databaseUrl = postgres.url;
    }
    return { databaseUrl, redisUrl, started, stop, embedded };
  } catch (error) {
    await stop();
    throw error;
  }
}
