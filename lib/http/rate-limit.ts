import 'server-only';
// Limits before work: how many orders and payments one caller may ask for per minute, counted in Redis (so
// every instance counts together) by a maintained limiter, rate-limiter-flexible (one Lua script, one key per
// caller: Cluster-safe). Over the limit: 429 with Retry-After. Redis down: the limiter's error is Redis's,
// and the route answers 503 like every other Redis failure (fail closed, decision 010).
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { env } from '../env.ts';
import { getRedis } from '../redis.ts';
import { problem, say } from './problem.ts';

/** `clicks`: the clicks a checkout page reports it swallowed (layer 0), counted apart, as many as payments. */
export type Limited = 'orders' | 'payments' | 'clicks';

const limiters = new Map<Limited, RateLimiterRedis>();

function limiterFor(kind: Limited): RateLimiterRedis | undefined {
  const points = kind === 'orders' ? env().RATE_LIMIT_ORDERS_PER_MINUTE : env().RATE_LIMIT_PAYMENTS_PER_MINUTE;
  if (points === 0) return undefined;
  let limiter = limiters.get(kind);
  if (!limiter) {
    limiter = new RateLimiterRedis({ storeClient: getRedis(), keyPrefix: `rate:${kind}`, points, duration: 60 });
    limiters.set(kind, limiter);
  }
  return limiter;
}

/** Counts one request of this caller; a 429 problem when it is over the limit, else undefined. */
export async function limitRate(kind: Limited, caller: string): Promise<Response | undefined> {
  const limiter = limiterFor(kind);
  if (!limiter) return undefined;
  try {
    await limiter.consume(caller);
    return undefined;
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error; // Redis failed: a 503, like any Redis failure
    const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    return problem(
      429,
      'rate-limited',
      'Too many requests',
      {
        detail: say('details.rateLimited', {
          points: String(limiter.points),
          kind: say(`kinds.${kind}`),
          seconds: String(seconds),
        }),
      },
      { 'retry-after': String(seconds) },
    );
  }
}

/** The caller a limit counts for: the named caller, or the address of one that names none. */
export function rateKeyOf(caller: string | undefined, headers: Headers): string {
  return caller ?? `addr:${headers.get('x-forwarded-for')?.split(',')[0]?.trim() ?? 'unknown'}`;
}
