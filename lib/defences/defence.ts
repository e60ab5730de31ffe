// The contract every defence keeps, so that the pipeline (lib/payments/pay.ts) is a list: each layer's whole
// story (how it stops a duplicate, what that duplicate is told, when its claim is completed, released or
// kept, its fencing token) lives in its own folder beside this file, in one function the payment passes
// through once, on its way to the bank and back (the shape of koa's and Hono's middleware):
//
//   guard(attempt, next)   stop: return stopped(answer), and the bank is never called
//                          pass: return next(), perhaps with a key for the bank
//                          hold: claim, then `await next({ lease })`, then complete, release or keep the claim
//                                with what the rest came to (an Ending), and return it
//
// What `next` comes back with, heard by every guard once, the innermost first (the database before the key):
//   stopped(answer)   a later defence stopped this attempt before the bank (or its claim was lost in a
//                     pause): a duplicate's outcome is this attempt's outcome too (complete the claim with
//                     it); any other stop gives the claim back. A guard may reword the answer.
//   banked(verdict)   the bank's verdict: settled (complete), nothingMoved (release), unknown (keep); with a
//                     `failure` when a step after the bank threw (a downstream notification): money moved
// What a guard does with its claim for each ending is the lab's release rule, decided in release.ts.
// A held claim's lease goes inward with `next`: its fencing token is what the bank checks (the innermost is
// sent), and after a pause of half a lease the pipeline renews it (the one call back into a defence, on that
// path only). From the bank call on, nothing may throw its way into a release: money may have moved; a
// simulated crash throws through every guard, which lets it (the process is dead). A guard's own store
// failing before the bank throws; the pipeline then brings the guards outside it a stop (nothing moved).
//
// Nothing comes from lib/payments: what a defence needs of the recovery path (the reconciler, asking the bank
// after a takeover) is passed in as `recovery`, so the direction of dependency stays app → lib/payments →
// lib/defences. Its decisions go to the attempt's span (lib/telemetry), which the lab may be listening to.

import type { CallerScope } from '../session.ts';
import type { Span } from '../telemetry/spans.ts';
import type { AfterBank, Charge, ClaimState, Fence } from './fencing.ts';
import type { KeyStrategy, Layer, ReleaseRule } from './layers.ts';
import type { PaymentOutcome } from './outcome.ts';
import type { RaceHook } from './race-points.ts';

/** Who gave the answer: a defence layer, the bank, or the reconciler it called. */
export type Answerer = Layer | 'bank' | 'reconciler';

/** What a payment request is told: by the bank through the pipeline, or by the defence that stopped it. */
export type Answer =
  /** This request ran the payment: the bank charged (or declined) the card. */
  | { kind: 'completed'; outcome: PaymentOutcome }
  /**
   * A duplicate, answered with the first request's outcome. `existing`: the payment was made for another
   * intent (another key, another tab), so this request reports it rather than claiming it (HTTP 200, not
   * 201); a request key keeps this with the outcome, so its replays answer exactly as it did.
   */
  | { kind: 'duplicate'; outcome: PaymentOutcome; answeredBy: Answerer; existing: boolean }
  /**
   * The first request is still running, or its outcome is being confirmed with the bank. The caller is
   * told to retry after 1 s, however long the wait may be (docs/decisions/014-answers-in-doubt.md).
   * `takenOver`: this request was the first, and lost its claim (it paused past its lease and another
   * request took the claim over and pays), so it must not be told it waited for "the first request".
   */
  | { kind: 'in_progress'; answeredBy: Answerer; takenOver?: true }
  /**
   * A duplicate of a finished payment, told "already submitted" and nothing more: the lab's wrong answer to a
   * duplicate (`answers.duplicate = error`). `answeredBy`: the defence that found the first outcome.
   */
  | { kind: 'duplicate_refused'; answeredBy: Answerer }
  /** Layer 1: this page's token was already used, has expired, or is not this session's. */
  | { kind: 'already_submitted' }
  /** Layer 2: the key was used before with a different payload, or on another endpoint (`usedOn`). */
  | { kind: 'mismatch'; usedOn?: string }
  /** The bank failed before charging; nothing moved and every claim was released: try again. */
  | { kind: 'failed_retryable'; reason: string }
  /**
   * The bank answered, then a step after it threw (a downstream notification): the request fails, though the
   * card may have been charged. What a retry then finds is the release rule's doing (release.ts).
   */
  | { kind: 'failed_after_bank'; reason: string }
  | { kind: 'order_not_found' }
  | { kind: 'amount_mismatch'; orderAmountCents: number };

/**
 * What a claim that another attempt took over answers (it paused past its lease): "in progress", from the layer
 * that held it, and never "the first request" (it was the first). The same for a payment and a refund.
 */
export type LostClaim = { kind: 'in_progress'; answeredBy: Answerer; takenOver: true };

/**
 * Whether an attempt stopped before the bank because `layer`'s own claim was lost: not that layer's to write any
 * more. Another layer's claim lost (the claims are renewed innermost first) leaves this one held, with nothing moved.
 */
export function lostBy(answer: { kind: string }, layer: Answerer): boolean {
  const lost = answer as Partial<LostClaim>;
  return lost.takenOver === true && lost.answeredBy === layer;
}

/** The layer 2 key an attempt runs under, as the lab's key strategy made it. */
export type AttemptKey = {
  /** The Redis key: `idem:{<caller>:<key>}`. */
  name: string;
  /** The payload as the caller sent it: the same key with another amount is a mismatch, not a retry. */
  fingerprint: string;
  /** The key as a step names it: "key <key> (<strategy>)", the strategy only when it is not `business`. */
  shown: { key: string; strategy: string };
};

/** What layer 2 answers: the first outcome, "in progress", or a mismatch. Every intent's answers include these. */
export type KeyAnswer<O> =
  | { kind: 'duplicate'; outcome: O; answeredBy: Answerer; existing: boolean }
  | { kind: 'in_progress'; answeredBy: Answerer; takenOver?: true }
  | { kind: 'mismatch'; usedOn?: string };

/**
 * What the bank's call came to, as every hold hears it: of a payment (the default), or of a refund (its outcome
 * type `O`; lib/refunds keeps this contract too).
 */
export type Verdict<O = PaymentOutcome> =
  /** Charged (perhaps the bank's replay of its first charge) or declined: every hold completes with it. */
  | { kind: 'settled'; outcome: O; existing: boolean }
  /** The bank refused before charging (unreachable, or a stale fencing token): nothing moved, release. */
  | { kind: 'nothingMoved' }
  /** The card may have been charged and the bank has not said so: keep every claim in doubt, since `since`. */
  | { kind: 'unknown'; since: number };

/**
 * What a request says about its intent, from which layer 2 makes its key (the lab's key strategy: the
 * article's first detail). The pipeline passes it on and never makes a key itself.
 */
export type Intent = {
  /** How layer 2 makes its key of the rest. */
  strategy: KeyStrategy;
  orderNo: string;
  /** API: the caller's Idempotency-Key. */
  idempotencyKey?: string;
  /** The parameters as submitted: the form's fields, or the JSON body, timestamp included if there is one. */
  params: Record<string, string | number>;
  /** The key the checkout form minted for this submit. */
  submitKey?: string;
};

/** The recovery path, as the defences may call it (lib/payments/reconcile.ts provides it). */
export type Recovery = {
  /**
   * Settles the order if its claim is dead. `payer`: this attempt takes the dead claim over itself and,
   * once nothing can be charged twice, goes on to pay under it (`resumed`).
   */
  reconcile(payer?: { attemptId: string; bankKey: boolean }): Promise<Reconciled>;
  /** Asks the bank, under a taker's new fencing token, what the claim taken over (`seen`) charged. */
  askBankAfterTakeover(
    query: { merchantRef: string; fence: Fence; byLock?: boolean },
    seen: ClaimState,
  ): Promise<{ verdict: AfterBank<Charge>; askedAt: number }>;
};

/** The reconciler's word on one order (lib/payments/reconcile.ts). */
export type Reconciled =
  /** The order has a final outcome: already recorded, or `found` now with the bank. */
  | { kind: 'settled'; outcome: PaymentOutcome; found?: boolean }
  /** The bank has no charge and none can land: the claim was released and the order is PENDING again. */
  | { kind: 'released' }
  /** (A payment that took the claim over) nothing can be charged twice now: it holds the claim, and pays. */
  | { kind: 'resumed'; hold: OrderHold }
  /** A live attempt holds the order (its lease has not run out), or another actor moved first. */
  | { kind: 'running' }
  /** No charge yet, but one may still land: the claim stays in doubt until the settlement window passes. */
  | { kind: 'waiting'; retryAfterMs: number }
  /** Nothing to do: nobody claims the order. */
  | { kind: 'idle' }
  /** No such order (never made, or pruned by retention since the attempt read it), or not this caller's to pay. */
  | { kind: 'gone' }
  /** (An attempt checked at its claim) the amount it states is not the order's. */
  | { kind: 'amountMismatch'; orderAmountCents: number };

/** What an attempt (or a taker) holds in the database: its id and the claim's fencing token. */
export type OrderHold = { orderNo: string; attemptId: string; fence: number };

/** One payment attempt, as every defence sees it. */
export type Attempt = {
  orderNo: string;
  /** The order's amount (what the bank is asked to charge). */
  amountCents: number;
  /** The amount the caller stated, if it did (API callers): it must be the order's. */
  statedAmountCents?: number;
  caller: CallerScope;
  /**
   * The order was not read before the defences (an API call that states its amount, under a policy that does
   * not depend on the order: the lab off), so `amountCents` is the stated amount and nobody has yet checked that
   * this caller may pay the order: the database's claim checks both in its statement, and the recovery path
   * reads the order first (pay.ts).
   */
  checkAtClaim?: boolean;
  /** A browser's page, or an API caller acting for a screen, presents a one-time token; a service call none. */
  fromPage: boolean;
  checkoutToken?: string;
  /** Whether the caller named its intent (an Idempotency-Key): a spent token is then answered by the key. */
  namedIntent: boolean;
  /** This attempt's id: the holder every claim records, so that only this attempt settles it. */
  attemptId: string;
  /** What the request says about its intent: layer 2's key is made of it. */
  intent: Intent;
  /** How long a claim lives unrenewed. */
  leaseMs: number;
  /** When a claim is given back after a failure (the article's third detail; release.ts). */
  release: ReleaseRule;
  /** How long layer 2 keeps a final outcome. */
  resultTtlSeconds: number;
  now: () => number;
  at?: RaceHook;
  /** Where its decisions are recorded: the payment's span, or the span of the defence it is in. */
  span: Span;
  recovery: Recovery;
};

/**
 * A held claim's lease, handed inward with `next`: the fencing token the bank checks (the innermost lease's is
 * sent), and its renewal after a pause.
 */
export type Lease = {
  readonly fence: Fence;
  /** The charges made under it are the lock's own, not the order's (a request key's). */
  readonly byLock: boolean;
  /** Who answers "in progress" if the bank finds the token stale. */
  readonly layer: Layer;
  /** Taken over from a stalled or dead attempt: this attempt recovers a payment (a stall fault spares it). */
  readonly tookOver: boolean;
  /**
   * After a pause, before the bank: renews the claim. Undefined while it is still this attempt's; once
   * another attempt has taken it over, what this one answers ("in progress", from the layer that held it).
   */
  renew(now: number): Promise<LostClaim | undefined>;
};

/** What a defence hands inward with `next`: its lease, a key for the bank (layer 5). */
export type Passing = { lease?: Lease; toBank?: ToBank };

/** What the bank is sent beside the charge: a defence's idempotency key (layer 5). */
export type ToBank = { idempotencyKey: string; keyedBy: Layer };

/**
 * What the rest of the payment came to, as each guard hears it when `next` returns. `A`, `O`: what the request is
 * told and what the bank's outcome is (a payment's by default; a refund's in lib/refunds).
 */
export type Ending<A = Answer, O = PaymentOutcome> =
  /**
   * Stopped before the bank, with the answer so far: nothing moved. `failure`: a defence inside failed (its
   * store is down); the guards give their claims back, then the pipeline throws it.
   */
  | { kind: 'stopped'; answer: A; failure?: unknown }
  /**
   * The bank's verdict, and what the request is told. `failure`: a step after the bank threw (a downstream
   * notification), so the request is told it failed although money may have moved.
   */
  | { kind: 'banked'; verdict: Verdict<O>; answer: A; failure?: unknown };

/** The rest of the payment, inside this defence: the defences after it, then the bank. */
export type Next<A = Answer, O = PaymentOutcome> = (passing?: Passing) => Promise<Ending<A, O>>;

/** A defence of a payment (the defaults), or of another intent that moves money (`At`, `A`, `O`: a refund's). */
export type Defence<At = Attempt, A = Answer, O = PaymentOutcome> = {
  /** The layer it is; a step that is not a layer (the order's amount) has none, only a name. */
  readonly layer?: Layer;
  readonly name?: string;
  guard(attempt: At, next: Next<A, O>): Promise<Ending<A, O>>;
};

/** This attempt stops here, before the bank, with `answer`. */
export function stopped<A>(answer: A): { kind: 'stopped'; answer: A } {
  return { kind: 'stopped', answer };
}
