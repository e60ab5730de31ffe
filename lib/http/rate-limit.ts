import 'server-only';
// Limits before work, counted in Redis (so every instance counts together) by a maintained limiter,
// rate-limiter-flexible (one Lua script, one key per count: Cluster-safe). Two counts per request: its caller's
// (a session, an X-Client-Id), and its client address's, which may spend RATE_LIMIT_CALLERS_PER_ADDRESS
// callers' worth: a new caller costs nothing to make, an address does (lib/http/client-address.ts). The
// presenter's sign-in is counted per address and for the whole room. Over a limit: 429 with Retry-After.
// Redis down: the limiter's error is Redis's, and the route answers 503 like every other Redis failure (fail
// closed, decision 010).
import { createHash } from 'node:crypto';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { env } from '../env.ts';
import { getRedis } from '../redis.ts';
import { clientAddressOf, trustedProxies } from './client-address.ts';
import { problem, say } from './problem.ts';

/**
 * `clicks`: the clicks a checkout page reports it swallowed (layer 0), counted apart, as many as payments.
 * `signIns`: the presenter's sign-in, the one place a secret can be guessed.
 */
export type Limited = 'orders' | 'payments' | 'clicks' | 'signIns';

/** Sign-ins a minute: per address, and for the whole room (a guesser with many addresses). */
export const SIGN_INS_PER_ADDRESS = 10;
export const SIGN_INS_PER_ROOM = 60;

type Count = 'caller' | 'address' | 'room';

const limiters = new Map<string, RateLimiterRedis>();

function pointsOf(kind: Limited, count: Count): number {
  if (kind === 'signIns') return count === 'room' ? SIGN_INS_PER_ROOM : SIGN_INS_PER_ADDRESS;
  const perCaller = kind === 'orders' ? env().RATE_LIMIT_ORDERS_PER_MINUTE : env().RATE_LIMIT_PAYMENTS_PER_MINUTE;
  return count === 'address' ? perCaller * env().RATE_LIMIT_CALLERS_PER_ADDRESS : perCaller;
}

function limiterFor(kind: Limited, count: Count): RateLimiterRedis | undefined {
  const points = pointsOf(kind, count);
  if (points === 0) return undefined;
  const name = `${kind}:${count}`;
  let limiter = limiters.get(name);
  if (!limiter) {
    // The caller's count keeps its old prefix (rate:<kind>:<caller>); the others say what they count.
    const keyPrefix = count === 'caller' ? `rate:${kind}` : `rate:${kind}:${count}`;
    limiter = new RateLimiterRedis({ storeClient: getRedis(), keyPrefix, points, duration: 60 });
    limiters.set(name, limiter);
  }
  return limiter;
}

let trusted: { entries: readonly string[]; list: ReturnType<typeof trustedProxies> | undefined } | undefined;

/** The address a request's costs are counted for (TRUSTED_PROXIES read once). */
export function addressOf(headers: { get(name: string): string | null }): string {
  const entries = env().TRUSTED_PROXIES;
  if (trusted?.entries !== entries) {
    trusted = { entries, list: entries.length > 0 ? trustedProxies(entries) : undefined };
  }
  return clientAddressOf(headers, trusted.list);
}

/** Counts one request (`key`: its count's name, made only when the limit is on); a 429 problem when over it. */
async function consume(kind: Limited, count: Count, key: string | (() => string)): Promise<Response | undefined> {
  const limiter = limiterFor(kind, count);
  if (!limiter) return undefined;
  try {
    await limiter.consume(typeof key === 'string' ? key : key());
    return undefined;
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error; // Redis failed: a 503, like any Redis failure
    const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    const message = ({ caller: 'rateLimited', address: 'rateLimitedAddress', room: 'rateLimitedRoom' } as const)[count];
    const detail = say(`details.${message}`, {
      points: String(limiter.points),
      kind: say(`kinds.${kind}`),
      seconds: String(seconds),
    });
    return problem(429, 'rate-limited', 'Too many requests', { detail }, { 'retry-after': String(seconds) });
  }
}

/**
 * Counts one request of this caller (none: a request that names nobody) from this client's headers: the
 * caller's count, then its address's. A 429 problem when either is over its limit, else undefined.
 */
export function limitRate(
  kind: Exclude<Limited, 'signIns'>,
  caller: string | undefined,
  headers: { get(name: string): string | null },
): Promise<Response | undefined> {
  // Both limits off (RATE_LIMIT_…_PER_MINUTE=0): nothing to count, and no count's promise to make (decision 038).
  if (!limiterFor(kind, 'caller') && !limiterFor(kind, 'address')) return NOT_LIMITED;
  return countBoth(kind, caller, headers);
}
const NOT_LIMITED: Promise<undefined> = Promise.resolve(undefined);

async function countBoth(
  kind: Exclude<Limited, 'signIns'>,
  caller: string | undefined,
  headers: { get(name: string): string | null },
): Promise<Response | undefined> {
  const ofCaller = caller === undefined ? undefined : await consume(kind, 'caller', caller);
  return ofCaller ?? (await consume(kind, 'address', () => addressOf(headers)));
}

/**
 * One try of the presenter's secret (the sign-in form, or a Bearer token), counted per address and for the
 * whole room before it is compared: `limited` without comparing once either count is spent. A right secret
 * gives its point back, so the presenter's own calls never use the limit up; wrong ones keep theirs.
 */
export async function trySecret(
  headers: { get(name: string): string | null },
  isRight: () => boolean,
  room = roomOf(env().LAB_SECRET),
): Promise<'right' | 'wrong' | { limited: Response }> {
  const address = addressOf(headers);
  const ofAddress = await consume('signIns', 'address', address);
  if (ofAddress) return { limited: ofAddress };
  const ofRoom = await consume('signIns', 'room', room);
  if (ofRoom) return { limited: ofRoom };
  if (!isRight()) return 'wrong';
  await Promise.all([
    limiterFor('signIns', 'address')?.reward(address, 1),
    limiterFor('signIns', 'room')?.reward(room, 1),
  ]);
  return 'right';
}

/** The room a try is counted for: the secret being guessed (its digest's start), so apps with others count apart. */
function roomOf(secret: string | undefined): string {
  return createHash('sha256')
    .update(`room:${secret ?? ''}`)
    .digest('base64url')
    .slice(0, 16);
}
