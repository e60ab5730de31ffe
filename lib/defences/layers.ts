// The defences' vocabulary, pure: the five layers in the article's order (and layer 0, the browser's pending
// state), the switches that turn them on, and what layer 2's key may be made of. The lab's settings, the
// pipeline and every screen name the layers with these.

/** Layers 1-5: the one-time token, the request key, the state machine, the unique constraint, the bank's key. */
export const LAYERS = ['token', 'requestKey', 'stateMachine', 'uniqueConstraint', 'bankKey'] as const;
export type Layer = (typeof LAYERS)[number];

/** Which layers are on; `pendingUi` is layer 0, the Pay button disabled while a payment is in flight. */
export type Layers = Record<'pendingUi' | Layer, boolean>;

/**
 * What layer 2's key is made of (the article's first detail). Only `business` is right: the key names the
 * intent and stays the same across its retries. The other two are the common mistakes, there to be watched.
 */
export const KEY_STRATEGIES = ['business', 'paramHash', 'perSubmit'] as const;
export type KeyStrategy = (typeof KEY_STRATEGIES)[number];

/**
 * What a refund's identity is made of (the article's first detail, its second half): a refund may happen more than
 * once per order, so only `requestId` is right, the id the caller created once for this refund and keeps across its
 * retries. `orderNo` makes every refund of the order one (the second legitimate refund is refused as a duplicate);
 * `paramHash` makes two legitimate refunds of the same amount one, and a retry stamped anew another.
 */
export const REFUND_KEY_STRATEGIES = ['requestId', 'orderNo', 'paramHash'] as const;
export type RefundKeyStrategy = (typeof REFUND_KEY_STRATEGIES)[number];

/**
 * When a claim is given back after its attempt failed (the article's third detail). Only `noMoneyMoved` is
 * right: released when the bank says nothing moved, kept when the outcome is unknown, completed when the charge
 * went through whatever failed after it. `anyError` gives it back on any error (the charge went through, and a
 * later step threw: the retry charges again); `never` leaves it (the customer cannot pay until it expires).
 */
export const RELEASE_RULES = ['noMoneyMoved', 'anyError', 'never'] as const;
export type ReleaseRule = (typeof RELEASE_RULES)[number];

/**
 * What a duplicate of a finished payment is told (the article's second detail). Only `firstResult` is right: the
 * first request's outcome, exactly as it was answered. `error` tells it "already submitted" and nothing more, as
 * a naive implementation does: the caller never learns what became of its payment, and retries again.
 */
export const DUPLICATE_ANSWERS = ['firstResult', 'error'] as const;
export type DuplicateAnswer = (typeof DUPLICATE_ANSWERS)[number];

/** Every layer on: what a checkout without the lab runs. */
export const ALL_LAYERS_ON: Layers = {
  pendingUi: true,
  token: true,
  requestKey: true,
  stateMachine: true,
  uniqueConstraint: true,
  bankKey: true,
};

/** The bank guarantees that a charge it accepted lands within this long, or never (lib/payments/bank.ts). */
export const BANK_SETTLEMENT_WINDOW_MS = 10_000;
/** How long a claim lives unrenewed, unless the lab (or REQUEST_KEY_LEASE_MS) says otherwise. */
export const DEFAULT_LEASE_MS = 30_000;

/** The switches a request ran under, as the room's view counts them ("defences on: 0 1 2 3 4 5"): "0 1 2", "none". */
export function defencesOn(layers: Layers): string {
  // Every payment's "received" says it (with the lab on): made once for each of the 64 combinations.
  let bits = 0;
  for (let number = 0; number < NUMBERED.length; number++)
    if (layers[NUMBERED[number] as keyof Layers]) bits |= 1 << number;
  let said = saidOf.get(bits);
  if (said === undefined) {
    const on = NUMBERED.flatMap((layer, number) => (layers[layer] ? [number] : []));
    said = on.length > 0 ? on.join(' ') : 'none';
    saidOf.set(bits, said);
  }
  return said;
}
const NUMBERED = ['pendingUi', ...LAYERS] as const;
const saidOf = new Map<number, string>();
