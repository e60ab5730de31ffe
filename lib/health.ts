import 'server-only';
import { Cluster } from 'ioredis';
import { getDb } from './db.ts';
import { getRedis } from './redis.ts';

export type ServiceState = 'ok' | 'down';
/**
 * Redis's memory against its maxmemory (noeviction: a full Redis refuses every write, so new orders and
 * payments get 503): `near-full` from NEAR_FULL of it, `full` at it.
 */
export type RedisState = ServiceState | 'near-full' | 'full';
export type RedisMemory = { usedBytes: number; maxBytes: number };
export type Health = { redis: RedisState; database: ServiceState; redisMemory?: RedisMemory };

/** The share of maxmemory from which health says Redis is nearly full. */
export const NEAR_FULL = 0.9;

const TIMEOUT_MS = 1_500;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref()),
  ]);
}

async function probe(check: () => Promise<unknown>): Promise<ServiceState> {
  try {
    await within(check(), TIMEOUT_MS);
    return 'ok';
  } catch {
    return 'down';
  }
}

/** used_memory and maxmemory from INFO memory's text (maxmemory 0: no limit). */
export function memoryOf(info: string): RedisMemory {
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { usedBytes: field('used_memory'), maxBytes: field('maxmemory') };
}

/** How full a Redis is: ok without a maxmemory. */
export function stateOf(memory: RedisMemory): 'ok' | 'near-full' | 'full' {
  if (memory.maxBytes === 0) return 'ok';
  if (memory.usedBytes >= memory.maxBytes) return 'full';
  return memory.usedBytes >= memory.maxBytes * NEAR_FULL ? 'near-full' : 'ok';
}

/** The fullest server's memory: the one server's, or a Cluster's primary nearest its maxmemory. */
export async function redisMemory(): Promise<RedisMemory> {
  const redis = getRedis();
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const memories = await Promise.all(servers.map(async (server) => memoryOf(await server.info('memory'))));
  const share = (memory: RedisMemory) => (memory.maxBytes === 0 ? 0 : memory.usedBytes / memory.maxBytes);
  return memories.reduce((fullest, memory) => (share(memory) > share(fullest) ? memory : fullest));
}

/**
 * One server: it answers. A Redis Cluster (decision 020): it says cluster_state:ok (every slot has a primary
 * that answers; one node's PONG says nothing of the others), and every primary it knows answers.
 */
async function pingRedis(): Promise<void> {
  const redis = getRedis();
  if (!(redis instanceof Cluster)) {
    await redis.ping();
    return;
  }
  const info = String(await redis.cluster('INFO'));
  if (!info.includes('cluster_state:ok')) throw new Error('the Redis Cluster is down');
  await Promise.all(redis.nodes('master').map((node) => node.ping()));
}

export async function checkHealth(): Promise<Health> {
  const [redis, database] = await Promise.all([probe(pingRedis), probe(() => getDb().$queryRaw`SELECT 1`)]);
  if (redis === 'down') return { redis, database };
  const memory = await within(redisMemory(), TIMEOUT_MS).catch(() => undefined);
  if (memory === undefined) return { redis: 'down', database };
  const state = stateOf(memory);
  return state === 'ok' ? { redis: state, database } : { redis: state, database, redisMemory: memory };
}
