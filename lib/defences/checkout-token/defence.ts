import 'server-only';
// Layer 1: the one-time checkout token. The checkout page gets a token when it loads; the pay action
// consumes it with an atomic compare-and-delete; only the request that deleted it proceeds.
// Catches: a double submit from the same page. Misses: a refresh (a new page gets a new token) and
// service-to-service retries (they carry no token); and it cannot return the first request's result.
//
// What a duplicate stopped here gets: "already submitted" (it holds no outcome to give), unless the caller
// named its intent with an Idempotency-Key and layer 2 is on: then the key's answer, the first outcome.
// Its claim: none to give back. A consumed token is spent for good; the next page load brings a new one.
import { randomBytes } from 'node:crypto';
import type { Result } from 'ioredis';
import { readLua, redisWith } from '../../redis.ts';
import type { CallerScope } from '../../session.ts';
import { decide, reason } from '../../telemetry/spans.ts';
import { type Answer, type Attempt, type Defence, stopped } from '../defence.ts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    consumeCheckoutToken(key: string, token: string): Result<number, Context>;
  }
}

const CONSUME = readLua('consumeCheckoutToken', 'defences/checkout-token/consume-token.lua', 1);

/** One token per order and caller: a newer page load replaces the older page's token. */
export function checkoutTokenKey(orderNo: string, caller: CallerScope): string {
  return `checkout:token:${orderNo}:${caller}`;
}

export type CheckoutToken = { token: string; expiresAt: Date };

/** 256 bits from the operating system's cryptographic random source. */
export async function issueCheckoutToken(
  orderNo: string,
  caller: CallerScope,
  ttlSeconds: number,
): Promise<CheckoutToken> {
  const token = randomBytes(32).toString('base64url');
  await redisWith().set(checkoutTokenKey(orderNo, caller), token, 'EX', ttlSeconds);
  return { token, expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
}

/** True when this request presented the live token and consumed it; false for any other token. */
export async function consumeCheckoutToken(orderNo: string, caller: CallerScope, token: string): Promise<boolean> {
  const deleted = await redisWith(CONSUME).consumeCheckoutToken(checkoutTokenKey(orderNo, caller), token);
  return deleted === 1;
}

/**
 * Layer 1 as a defence. `keyAnswers`: layer 2 is on (given by whoever composes the defences), so a spent
 * token on a request that names its intent is answered by what its key already holds (result idempotency)
 * before "already submitted".
 */
export function checkoutTokenDefence(options: {
  keyAnswers?: (attempt: Attempt) => Promise<(() => Answer) | undefined>;
}): Defence {
  return {
    layer: 'token',
    async guard(attempt, next) {
      const { orderNo, caller, checkoutToken, span } = attempt;
      const consumed = checkoutToken ? await consumeCheckoutToken(orderNo, caller, checkoutToken) : false;
      if (consumed) {
        const name = checkoutTokenKey(orderNo, caller).split(':').slice(0, 3).join(':');
        decide(span, 'token', 'passed', () => reason('tokenConsumed', { token: name }));
        return next();
      }
      const known = attempt.namedIntent ? await options.keyAnswers?.(attempt) : undefined;
      if (known) {
        decide(span, 'token', 'spent', () => reason('tokenSpent'));
        return stopped(known());
      }
      decide(span, 'token', 'stopped', () => reason('tokenStopped'));
      return stopped({ kind: 'already_submitted' });
    },
  };
}
