// What a request costs, counted and not timed: Redis commands (INFO commandstats) and database round trips.
import type { Redis } from 'ioredis';
import { BASE } from './plan.ts';

export async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const stats = new Map<string, number>();
  for (const match of info.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g))
    stats.set(match[1] as string, Number(match[2]));
  return stats;
}

export function delta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, calls] of after) {
    const diff = calls - (before.get(name) ?? 0);
    if (diff > 0 && name !== 'info') out.set(name, diff);
  }
  return out;
}

/** The database round trips the app instance at `base` has made so far. */
export async function roundTrips(base = BASE): Promise<number> {
  return ((await (await fetch(`${base}/api/bench/stats`)).json()) as { databaseRoundTrips: number }).databaseRoundTrips;
}

/**
 * Redis commands and database round trips per request, and its mean time, over `count` sequential requests.
 * `base`: the app instance they are sent to (the round trips are its own count).
 */
export async function costOf(
  redis: Redis,
  count: number,
  send: (i: number) => Promise<Response>,
  base = BASE,
): Promise<{ redis: Map<string, number>; redisTotal: number; database: number; msEach: number }> {
  await new Promise((resolve) => setTimeout(resolve, 300)); // let fire-and-forget timeline writes land
  const [redisBefore, dbBefore] = [await commandStats(redis), await roundTrips(base)];
  const started = performance.now();
  for (let i = 0; i < count; i++) await (await send(i)).arrayBuffer();
  const msEach = (performance.now() - started) / count;
  await new Promise((resolve) => setTimeout(resolve, 300));
  const [redisAfter, dbAfter] = [await commandStats(redis), await roundTrips(base)];
  const perRequest = new Map([...delta(redisBefore, redisAfter)].map(([name, calls]) => [name, calls / count]));
  return {
    redis: perRequest,
    redisTotal: [...perRequest.values()].reduce((a, b) => a + b, 0),
    database: (dbAfter - dbBefore) / count,
    msEach,
  };
}

/**
 * One payment of the order's amount (4,200 cents), with this Idempotency-Key, to the app instance at `base`: through
 * the API (`/api/payments`), or one of the benchmark's yardsticks behind the same request (`/api/bench/ideal`,
 * `/api/bench/straight-line`).
 */
export function payAt(base: string, orderNo: string, key: string, route = '/api/payments'): Promise<Response> {
  return fetch(`${base}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-client-id': 'bench' },
    body: JSON.stringify({ orderNo, amountCents: 4200 }),
  });
}
