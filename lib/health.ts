import 'server-only';
import { Cluster } from 'ioredis';
import { getDb } from './db.ts';
import { getRedis } from './redis.ts';

export type ServiceState = 'ok' | 'down';
export type Health = { redis: ServiceState; database: ServiceState };

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
  return { redis, database };
}
