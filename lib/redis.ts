import 'server-only';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Cluster, type Command, Redis } from 'ioredis';
import { env, requireEnv } from './env.ts';
import { isRedisClusterUrl, parseRedisClusterUrl } from './redis-cluster-url.ts';

/** One Redis server, or a Redis Cluster (REDIS_URL `redis-cluster://…`): the same commands, routed by key slot. */
export type RedisClient = Redis | Cluster;

// Give up on a command after one reconnection attempt or five seconds, so that a Redis outage
// turns into a fast, clear error instead of requests piling up. Two seconds was too short for a busy machine:
// beside a second test run (load about 18) a healthy Redis's answers came later than that, and payments
// answered 503 that Redis would have served.
const COMMAND_TIMEOUT_MS = 5_000;
const CONNECTION = { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: COMMAND_TIMEOUT_MS };
const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2_000);

/**
 * A cluster client whose every command has the same five-second deadline as on one server. ioredis arms a
 * command's timer only once a node's connection takes it; while the whole cluster is unreachable the cluster
 * client queues commands and would keep them until it reconnects, so a payment would hang instead of being
 * refused at once (decision 010). The timer is armed here, before any queue; a node does not arm it twice.
 */
class DeadlineCluster extends Cluster {
  override sendCommand(command: Command, ...rest: unknown[]): unknown {
    command.setTimeout(COMMAND_TIMEOUT_MS);
    return (super.sendCommand as (...args: unknown[]) => unknown)(command, ...rest);
  }
}

/** Where Redis is: a URL (one server, or a cluster), or Sentinels and the name they monitor the primary under. */
export type RedisTarget = { url: string } | { sentinels: Array<{ host: string; port: number }>; name: string };

/** A client for a Redis server, a cluster (decision 020) or a Sentinel-watched primary (decision 019). */
export function connectRedis(target: RedisTarget | string): RedisClient {
  const where = typeof target === 'string' ? { url: target } : target;
  if ('sentinels' in where) {
    // Through Sentinel (ioredis's own support): each connection asks a Sentinel which server is the primary,
    // and `failoverDetector` drops the connection when the Sentinels announce a new one (+switch-master), so
    // the client does not stay on a demoted primary that still answers. Writes it acknowledged that had not
    // reached the replica are lost in a failover all the same (decision 019). A Sentinel that takes the
    // connection and never answers (paused, swapped out) is given up after a command's deadline, and the next
    // one asked: without it the client would wait on that one Sentinel for ever, the others knowing the primary.
    return new Redis({
      ...CONNECTION,
      retryStrategy,
      ...where,
      failoverDetector: true,
      sentinelCommandTimeout: COMMAND_TIMEOUT_MS,
    });
  }
  if (!isRedisClusterUrl(where.url)) return new Redis(where.url, { ...CONNECTION, retryStrategy });
  const { nodes, username, password, tls } = parseRedisClusterUrl(where.url);
  return new DeadlineCluster(nodes, {
    // Each node's connection: the same limits as one server's (a node's reconnection is the cluster's job).
    redisOptions: { ...CONNECTION, username, password, ...(tls ? { tls: {} } : {}) },
    clusterRetryStrategy: retryStrategy,
    // Ready once CLUSTER INFO says cluster_state:ok, not when a first node answers.
    enableReadyCheck: true,
  });
}

/** This process's Redis, as the environment says: REDIS_SENTINELS + REDIS_SENTINEL_NAME, else REDIS_URL. */
export function redisTargetFromEnv(): RedisTarget {
  const { REDIS_URL: url, REDIS_SENTINELS: sentinels, REDIS_SENTINEL_NAME: name } = env();
  if (sentinels && name) return { sentinels, name };
  return { url: url ?? requireEnv('REDIS_URL') };
}

function createRedisClient(): RedisClient {
  const client = connectRedis(redisTargetFromEnv());
  client.on('error', (error: Error) => console.error(`[redis] ${error.message}`));
  for (const watch of globalForRedis.redisWatchers ?? []) if (client instanceof Redis) watch(client);
  return client;
}

const globalForRedis = globalThis as unknown as { redis?: RedisClient; redisWatchers?: Array<(client: Redis) => void> };

/**
 * Someone (the lab) watches this process's Redis server: `watch` gets the client (one server, or a
 * Sentinel's primary; a cluster's primaries fail over inside it, node by node), now if it exists, else when made.
 */
export function watchRedisServer(watch: (client: Redis) => void): void {
  globalForRedis.redisWatchers ??= [];
  globalForRedis.redisWatchers.push(watch);
  if (globalForRedis.redis instanceof Redis) watch(globalForRedis.redis);
}

/** The process's one Redis client (created on first use, like the database client). */
export function getRedis(): RedisClient {
  globalForRedis.redis ??= createRedisClient();
  return globalForRedis.redis;
}

/** Disconnects the process's client and forgets it: a script's next getRedis() connects anew. */
export function closeRedis(): void {
  globalForRedis.redis?.disconnect();
  globalForRedis.redis = undefined;
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
export function redisWith(...scripts: LuaScript[]): RedisClient {
  const client = getRedis();
  for (const script of scripts) {
    if (!(script.name in client)) {
      client.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  }
  return client;
}
