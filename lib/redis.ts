import 'server-only';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Cluster, type Command, Redis } from 'ioredis';
import { requireEnv } from './env.ts';
import { isRedisClusterUrl, parseRedisClusterUrl } from './redis-cluster-url.ts';

/** One Redis server, or a Redis Cluster (REDIS_URL `redis-cluster://…`): the same commands, routed by key slot. */
export type RedisClient = Redis | Cluster;

// Give up on a command after one reconnection attempt or two seconds, so that a Redis outage
// turns into a fast, clear error instead of requests piling up.
const COMMAND_TIMEOUT_MS = 2_000;
const CONNECTION = { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: COMMAND_TIMEOUT_MS };
const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2_000);

/**
 * A cluster client whose every command has the same two-second deadline as on one server. ioredis arms a
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

/** A client for REDIS_URL's server or cluster (decision 020), with the project's timeouts and retries. */
export function connectRedis(url: string): RedisClient {
  if (!isRedisClusterUrl(url)) return new Redis(url, { ...CONNECTION, retryStrategy });
  const { nodes, username, password, tls } = parseRedisClusterUrl(url);
  return new DeadlineCluster(nodes, {
    // Each node's connection: the same limits as one server's (a node's reconnection is the cluster's job).
    redisOptions: { ...CONNECTION, username, password, ...(tls ? { tls: {} } : {}) },
    clusterRetryStrategy: retryStrategy,
    // Ready once CLUSTER INFO says cluster_state:ok, not when a first node answers.
    enableReadyCheck: true,
  });
}

function createRedisClient(): RedisClient {
  const client = connectRedis(requireEnv('REDIS_URL'));
  client.on('error', (error: Error) => console.error(`[redis] ${error.message}`));
  return client;
}

const globalForRedis = globalThis as unknown as { redis?: RedisClient };

/** The process's one Redis client (created on first use, like the database client). */
export function getRedis(): RedisClient {
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
export function redisWith(...scripts: LuaScript[]): RedisClient {
  const client = getRedis();
  for (const script of scripts) {
    if (!(script.name in client)) {
      client.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  }
  return client;
}
