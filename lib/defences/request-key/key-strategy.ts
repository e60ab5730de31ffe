// Layer 2's key, as the lab's key strategy makes it: the article's first detail, made switchable so a
// workshop can watch the wrong keys fail. Pure: unit-tested without servers.
//
//   business   the intent's identity: the order number (a checkout), or the Idempotency-Key the caller
//              created with the intent and keeps across its retries (an API call). Every retry: one key.
//   paramHash  a hash of the submitted parameters. The checkout form stamps each submit with its time, as
//              many real forms and SDKs do (a `timestamp` field): every new submit is a new key.
//   perSubmit  a fresh random key minted for each submit (the form mints one per click; for the API, one
//              per request received, like a request id made at the edge) and never persisted.
import { hash, randomUUID } from 'node:crypto';
import type { Intent } from '../defence.ts';
import type { KeyStrategy, RefundKeyStrategy } from '../layers.ts';
import { canonicalOf } from './record.ts';

/** What a request says about its intent, from which each strategy makes its key. */
export type KeySources = Omit<Intent, 'strategy'>;

export function requestKeyFor(strategy: KeyStrategy, sources: KeySources, mint: () => string = randomUUID): string {
  switch (strategy) {
    case 'business':
      return sources.idempotencyKey ?? `order:${sources.orderNo}`;
    case 'paramHash':
      return `params:${hashParams(sources.params)}`;
    case 'perSubmit':
      return `submit:${sources.submitKey ?? mint()}`;
  }
}

/**
 * A refund's identity, as the refund's key strategy makes it: the caller's request id as it is (the Idempotency-Key,
 * the back office's draft, the queue message's id: not scoped per caller, so that two operators of one draft are one
 * refund), or, to be watched failing, the order number or the parameters, prefixed so that neither is ever a
 * payment's key (`order:<no>` is the checkout's).
 */
export function refundKeyFor(
  strategy: RefundKeyStrategy,
  sources: { requestId: string; orderNo: string; params: Record<string, string | number> },
): string {
  switch (strategy) {
    case 'requestId':
      return sources.requestId;
    case 'orderNo':
      return `refund-order:${sources.orderNo}`;
    case 'paramHash':
      return `refund-params:${hashParams(sources.params)}`;
  }
}

/** SHA-256 of the parameters in a canonical order (so the order of the fields does not matter). */
export function hashParams(params: Record<string, string | number>): string {
  return hash('sha256', canonicalOf(params), 'hex');
}

/** The key as the timeline shows it: enough to tell two keys apart, short enough for a lane. */
export function shortKey(key: string): string {
  return key.length <= 28 ? key : `${key.slice(0, 20)}…${key.slice(-4)}`;
}
