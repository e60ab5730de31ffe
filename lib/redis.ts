import 'server-only';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { env, requireEnv } from './env.ts';
import { watchPrimary } from './lab/redis-failover.ts';

function createRedisClient(): Redis {
  const options: RedisOptions = {
    // Give up on a command after one reconnection attempt or two seconds, so that a Redis outage
    // turns into a fast, clear error instead of requests piling up.
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  };
  // Through Sentinel (ioredis's own support): each connection asks a Sentinel which server is the primary,
  // and `failoverDetector` drops the connection when the Sentinels announce a new one (+switch-master), so
  // the client does not stay on a demoted primary that still answers. Writes it acknowledged that had not
  // reached the replica are lost in a failover all the same (decision 019); watchPrimary tells the lab.
  const { REDIS_SENTINELS: sentinels, REDIS_SENTINEL_NAME: name } = env();
  const client =
    sentinels && name
      ? new Redis({ ...options, sentinels, name, failoverDetector: true })
      : new Redis(requireEnv('REDIS_URL'), options);
  client.on('error', (error: Error) => console.error(`[redis] ${error.message}`));
  watchPrimary(client);
  return client;
}

const globalForRedis = globalThis as unknown as { redis?: Redis };

/** The process's one Redis client (created on first use, like the database client). */
export function getRedis(): Redis {
  globalForRedis.redis ??= createRedisClient();
  return globalForRedis.redis;
}

/**
 * A Lua script kept as source next to the module that uses it. Register it once per client with
 * ioredis `defineCommand` (EVALSHA, falling back to EVAL when Redis has not seen the script).
 */
export type LuaScript = { name: string; numberOfKeys: number; lua: string };

/** `file` is relative to lib/, e.g. 'defences/consume-token.lua'. */
export function readLua(name: string, file: string, numberOfKeys: number): LuaScript {
  return { name, numberOfKeys, lua: readFileSync(path.join(process.cwd(), 'lib', file), 'utf8') };
}

/** The client, with these scripts defined on it (each only once). */
export function redisWith(...scripts: LuaScript[]): Redis {
  const client = getRedis();
  for (const script of scripts) {
    if (!(script.name in client)) {
      client.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  }
  return client;
}
