// A refund, as every defence of a refund sees it: the second intent that moves money for an order, the one where
// the order number is the wrong key (the article's first detail, its second half). Money may move more than once
// per order here (a customer may get several partial refunds), so a refund's identity is a request id that the
// caller creates once per intent and keeps before it sends (a back office's draft, an API caller's
// Idempotency-Key, a queue message's id); the lab's wrong strategies make it of the order number or of the
// parameters instead. Its defences keep the payments' contract (defence.ts, with a refund's answer and outcome):
// the request key (2), the refund's state machine (3) and its dedup row (4) as one claim that also puts its amount
// on the order's ledger, and the bank's key for the refund (5). The ledger, refunded ≤ charged, is the database's
// own CHECK: whatever gets through, never more back than was paid.
import { z } from 'zod';
import type { CallerScope } from '../session.ts';
import type { Span } from '../telemetry/spans.ts';
import type { Answerer, AttemptKey, KeyAnswer } from './defence.ts';
import type { AfterBank, ClaimState, Fence } from './fencing.ts';
import type { ReleaseRule } from './layers.ts';
import type { RaceHook } from './race-points.ts';

export const RefundOutcomeSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('SUCCEEDED'),
    orderNo: z.string(),
    amountCents: z.number().int(),
    /** The bank's refund. */
    refundId: z.string(),
    refundedAt: z.string(),
  }),
  z.object({
    status: z.literal('FAILED'),
    orderNo: z.string(),
    amountCents: z.number().int(),
    /** Why the bank refused it: more than what was left of the charge. */
    reason: z.string(),
  }),
]);
export type RefundOutcome = z.infer<typeof RefundOutcomeSchema>;

export function parseRefundOutcome(value: unknown): RefundOutcome | undefined {
  const parsed = RefundOutcomeSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** A refund as the bank recorded it: what a claim taken over may turn out to have refunded. */
export type Refunded = { id: string; amountCents: number; createdAt: Date };

/** The outcome a refund on the bank's statement means: the refund succeeded, by that refund. */
export function outcomeFromRefund(orderNo: string, refund: Refunded): RefundOutcome & { status: 'SUCCEEDED' } {
  return {
    status: 'SUCCEEDED',
    orderNo,
    amountCents: refund.amountCents,
    refundId: refund.id,
    refundedAt: refund.createdAt.toISOString(),
  };
}

/** What a refund request is told. */
export type RefundAnswer =
  /** This request made the refund: the bank refunded (or refused it). */
  | { kind: 'completed'; outcome: RefundOutcome }
  /** Layer 2's answers: the first outcome (a duplicate), "in progress", the key reused for another request. */
  | KeyAnswer<RefundOutcome>
  /** The lab's wrong answer to a duplicate: "already submitted" and nothing more. */
  | { kind: 'duplicate_refused'; answeredBy: Answerer }
  /** The bank failed before refunding; nothing moved and every claim was given back: try again. */
  | { kind: 'failed_retryable'; reason: string }
  | { kind: 'order_not_found' }
  /** Only a paid order can be refunded. */
  | { kind: 'not_paid'; status: string }
  /** The order's payment is under way, or in doubt until the bank can tell: not paid yet, but it may be. */
  | { kind: 'payment_in_progress'; status: string }
  /** The ledger refused it: the refunds (claimed, made or in doubt) would pass the charge. Nothing moved. */
  | { kind: 'exceeds'; leftCents: number }
  /** This refund's identity was recorded with another amount: the same refund cannot be for two amounts. */
  | { kind: 'amount_mismatch'; refundAmountCents: number };

/** What an attempt (or a taker) holds of a refund: its identity, its id and the claim's fencing token. */
export type RefundHold = { orderNo: string; refundKey: string; attemptId: string; fence: number };

/** The reconciler's word on one refund (lib/refunds/reconcile.ts), as the payments' (Reconciled) is. */
export type RefundReconciled =
  | { kind: 'settled'; outcome: RefundOutcome; found?: boolean }
  | { kind: 'released' }
  | { kind: 'resumed'; hold: RefundHold }
  | { kind: 'running' }
  | { kind: 'waiting'; retryAfterMs: number }
  | { kind: 'idle' }
  | { kind: 'gone' };

/** The recovery path, as the refund's defences may call it (lib/refunds/reconcile.ts provides it). */
export type RefundRecovery = {
  reconcile(payer?: { attemptId: string; bankKey: boolean }): Promise<RefundReconciled>;
  askBankAfterTakeover(
    query: { merchantRef: string; fence: Fence; byLock?: boolean },
    seen: ClaimState,
  ): Promise<{ verdict: AfterBank<Refunded>; askedAt: number }>;
  /** The refund the bank made under this idempotency key (layer 5's), if it made one. */
  refundOfBankKey(key: string): Promise<Refunded | undefined>;
};

/** One refund attempt, as every defence of a refund sees it. */
export type RefundAttempt = {
  orderNo: string;
  /** The refund's identity: the key its strategy made (the request id; `order:…` or `params:…` in the lab). */
  refundKey: string;
  /** What the bank knows the refund by: `<order no>/<refund key>`. */
  reference: string;
  /** The order's charge, refunded. */
  chargeId: string;
  amountCents: number;
  caller: CallerScope;
  attemptId: string;
  /** Layer 2's key. */
  key: AttemptKey;
  leaseMs: number;
  release: ReleaseRule;
  resultTtlSeconds: number;
  now: () => number;
  at?: RaceHook;
  span: Span;
  recovery: RefundRecovery;
};

/** A refund's reference at the bank, and its dedup row's business number: `<order no>/<refund key>`. */
export function refundReference(orderNo: string, refundKey: string): string {
  return `${orderNo}/${refundKey}`;
}

/** The operation a refund's request key is bound to: the same key on a payment is a mismatch. */
export const REFUNDS_ENDPOINT = 'POST /api/refunds';
