// Leases and fencing tokens, shared by every claim (the request key of layer 2, the order's PROCESSING state
// of layer 3, the dedup row of layer 4), pure: whether a claim is alive, and what the bank's answer allows
// once a dead claim has been taken over. The writes that follow are each conditional on exactly the claim
// judged here (lib/defences/order-claim/store.ts, lib/defences/request-key/defence.ts).

/** A charge as the bank recorded it (lib/payments/bank.ts): what a claim taken over may turn out to have paid. */
export type Charge = { id: string; amountCents: number; createdAt: Date };

/** A fencing token, as the bank checks it: `token` is the generation of the claim named `lock`. */
export type Fence = { lock: string; token: number };

/** A claim as stored: on the order (layer 3), on its dedup row (layer 4), or on a request key (layer 2). */
export type ClaimState = {
  /** Who holds it; null when nobody does (the outcome became unknown and its holder let go). */
  holder: string | null;
  /** The claim's generation: its fencing token. */
  fence: number;
  /**
   * The token of the first claim of this chain of takeovers (the claim itself, if it was never taken over):
   * the lowest token a charge still in doubt may carry. Every takeover keeps it.
   */
  firstFence: number;
  /** When the holder took it or last renewed it. */
  claimedAt: number;
  /** Since when the outcome is in doubt, the bank having been fenced (null: not yet). */
  unknownSince: number | null;
};

export type Liveness =
  /** Someone holds it within its lease: leave it alone, answer "in progress". */
  | { kind: 'live'; holder: string }
  /** Abandoned (nobody holds it, the lease ran out, or its holder is known dead): take it over. */
  | { kind: 'dead' };

export function judgeClaim(
  claim: ClaimState,
  context: { now: number; leaseMs: number; deadAttempt?: (attemptId: string) => boolean },
): Liveness {
  const { holder } = claim;
  if (holder === null || context.deadAttempt?.(holder)) return { kind: 'dead' };
  return claim.claimedAt + context.leaseMs > context.now ? { kind: 'live', holder } : { kind: 'dead' };
}

export type AfterBank<Charge> =
  /** The bank charged under this intent: the order is paid by the first charge. */
  | { kind: 'charged'; charge: Charge }
  /** No charge, and none can land any more: nothing moved. The claim may be released, or paid again. */
  | { kind: 'nothing' }
  /** No charge yet, but one may still land: keep the claim in doubt until `until`, then ask again. */
  | { kind: 'wait'; until: number };

/**
 * What the answer of the bank (asked under the taker's new fence) means for a claim taken over.
 * "No charge" is final in two cases only: no request under any claim of the chain ever reached the bank (the
 * bank had not seen a token as high as the chain's first: nothing can land, and the new token now keeps it
 * all out), or the settlement window has passed since the outcome came into doubt (every accepted charge has
 * landed). Doubt belongs to the payment, not to the last claim: a taker that died before asking passes on the
 * first claim's doubt, never its own clean slate.
 */
export function judgeBankAnswer<Charge>(answer: {
  charges: Charge[];
  previousToken: number | null;
  /** The first token of the chain of claims the taker took over (ClaimState.firstFence). */
  firstFence: number;
  unknownSince: number | null;
  now: number;
  windowMs: number;
}): AfterBank<Charge> {
  const [charge] = answer.charges;
  if (charge) return { kind: 'charged', charge };
  if (answer.previousToken === null || answer.previousToken < answer.firstFence) return { kind: 'nothing' };
  const since = answer.unknownSince ?? answer.now;
  return since + answer.windowMs <= answer.now ? { kind: 'nothing' } : { kind: 'wait', until: since + answer.windowMs };
}
