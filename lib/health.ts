import 'server-only';
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

export async function checkHealth(): Promise<Health> {
  const [redis, database] = await Promise.all([
    probe(() => getRedis().ping()),
    probe(() => getDb().$queryRaw`SELECT 1`),
  ]);
  return { redis, database };
}
