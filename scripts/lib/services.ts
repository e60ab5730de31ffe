// The services the app needs: the servers named by DATABASE_URL / REDIS_URL, or, where unset, the
// embedded ones (a real PostgreSQL from npm, a real redis-server) on their own non-default ports.
import path from 'node:path';
import { ROOT } from './paths.ts';
import { startEmbeddedPostgres } from './postgres.ts';
import { startRedisServer } from './redis.ts';
import { ensureProgram, REDIS_SERVER } from './system-programs.ts';

export type Services = { databaseUrl: string; redisUrl: string; started: string[]; stop: () => Promise<void> };

export async function startServices(options: {
  /** Embedded data lives in <dataDir>/<profile>/ (git-ignored). */
  profile: 'demo' | 'test' | 'bench';
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  postgresPort: number;
  redisPort: number;
  log: (line: string) => void;
}): Promise<Services> {
  const { profile, log } = options;
  const dataDir = path.resolve(ROOT, options.dataDir, profile);
  const stops: Array<() => Promise<void>> = [];
  const started: string[] = [];
  const stop = async () => {
    // Last started, first stopped.
    for (const stopOne of stops.reverse()) await stopOne().catch(() => {});
  };
  try {
    let redisUrl = options.redisUrl;
    if (!redisUrl) {
      const binary = ensureProgram(REDIS_SERVER, log);
      const redis = await startRedisServer({
        binary,
        port: options.redisPort,
        dataDir: path.join(dataDir, 'redis'),
        persist: profile === 'demo',
      });
      stops.push(redis.stop);
      started.push(`Redis on 127.0.0.1:${options.redisPort}`);
      redisUrl = redis.url;
    }
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      const postgres = await startEmbeddedPostgres({
        dataDir: path.join(dataDir, 'postgres'),
        port: options.postgresPort,
        database: profile === 'demo' ? 'payonce' : `payonce_${profile}`,
        // The demo's and the benchmark's data are written for real (the benchmark measures commits).
        durable: profile !== 'test',
        log,
      });
      stops.push(postgres.stop);
      started.push(`PostgreSQL on 127.0.0.1:${options.postgresPort}`);
      databaseUrl = postgres.url;
    }
    return { databaseUrl, redisUrl, started, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
