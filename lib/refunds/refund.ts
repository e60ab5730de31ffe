import 'server-only';
// The refund pipeline: one request to give money back, top to bottom, through the refund's defences (lib/defences/
// refund-defences-for.ts), then the bank, then the outcome. Used by the order's refund form (server action), by
// POST /api/refunds and by the refund worker (a queue's messages).
//
//   0. the order: only its owner (and the sessions it let in) may refund it, and only once it is paid
//   1. the refund's identity: the caller's request id (the key strategy's; the lab shows the wrong ones)
//   2. request key          Redis            retries of the same refund get its first outcome
//      (its record)         PostgreSQL       the refund recorded as asked for, for one amount
//   3. state machine        PostgreSQL       ┐ one statement, which also puts its amount on the order's ledger:
//   4. unique constraint    PostgreSQL       ┘ the database refuses refunds past the charge (the last millimetre)
//   5. bank key             the bank         the bank returns its first refund for the refund's key
//   6. the bank             refunds every call its fence lets through, never past the charge
//   7. every claim hears the bank's verdict: completed, given back (the amount off the ledger), or kept in doubt
import { getDb } from '../db.ts';
import type { Ending } from '../defences/defence.ts';
import { defencesOn } from '../defences/layers.ts';
import type { RaceHook } from '../defences/race-points.ts';
import type { RefundAnswer, RefundAttempt, RefundOutcome } from '../defences/refund.ts';
import { refundDefencesFor, refundIdentity } from '../defences/refund-defences-for.ts';
import { env } from '../env.ts';
import { instanceName, newAttemptId, newRequestId } from '../instance.ts';
import type { BankFaults } from '../payments/bank.ts';
import { refundOfBankKey } from '../payments/bank-refunds.ts';
import { FAILED_BEFORE_BANK, faultContext, guarded, type Handed, stillHeld } from '../payments/guarded.ts';
import { mayUse } from '../payments/orders.ts';
import { type PaymentPolicy, policySource } from '../payments/policy.ts';
import { settlePaymentNow } from '../payments/reconcile.ts';
import type { CallerScope } from '../session.ts';
import { ATTR, decide, hashCaller, type Reason, reason, type Span, startSpan } from '../telemetry/spans.ts';
import { callBankForRefund } from './bank-call.ts';
import { askBankAfterRefundTakeover, reconcileRefund } from './reconcile.ts';

export type RefundRequest = {
  orderNo: string;
  amountCents: number;
  caller: CallerScope;
  channel: 'browser' | 'api' | 'queue';
  /**
   * The caller's request id for this refund, created once for it and kept across its retries: the API's
   * Idempotency-Key, the back office's draft, the queue message's id.
   */
  requestId: string;
  /** The parameters as submitted (the lab's `paramHash` strategy hashes them). */
  params?: Record<string, string | number>;
  /** The id the route gave this request (its X-Request-Id): its lane on the timeline. */
  laneId?: string;
};

export type RefundResult = { laneId: string } & RefundAnswer;

export type RefundOptions = {
  resultTtlSeconds: number;
  now: () => number;
  /** Tests only: waits at the pipeline's named points (the race explorer's scheduler). */
  at?: RaceHook;
  /** Tests only: this attempt's own bank faults, over the order's. */
  bankFaults?: Partial<BankFaults>;
  /** Tests only: new attempt ids. */
  attemptIds?: () => string;
};

export function defaultRefundOptions(): RefundOptions {
  return { resultTtlSeconds: env().REQUEST_KEY_RESULT_TTL_SECONDS, now: Date.now };
}

export async function refund(request: RefundRequest, options = defaultRefundOptions()): Promise<RefundResult> {
  const laneId = request.laneId ?? newRequestId();
  const span = startSpan('refund', {
    attributes: {
      [ATTR.orderNo]: request.orderNo,
      [ATTR.channel]: request.channel,
      [ATTR.requestId]: laneId,
      [ATTR.instance]: instanceName(),
      [ATTR.caller]: hashCaller(request.caller),
    },
  });
  try {
    const answer = await refundOnce(request, options, span);
    decide(span, 'outcome', answer.kind, () => summarize(answer));
    span.setAttribute(ATTR.outcome, answer.kind);
    if ('outcome' in answer) span.setAttribute(ATTR.status, answer.outcome.status);
    return { laneId, ...answer };
  } finally {
    span.end();
  }
}

type OrderToRefund = { amountCents: number; chargeId: string; policy: PaymentPolicy };

async function refundOnce(request: RefundRequest, options: RefundOptions, span: Span): Promise<RefundAnswer> {
  // 0. The order, if this caller may refund it, and paid.
  const order = await orderFor(request, span, options.now);
  if (!order) return { kind: 'order_not_found' };
  if ('status' in order)
    return order.underWay
      ? { kind: 'payment_in_progress', status: order.status }
      : { kind: 'not_paid', status: order.status };
  const { layers } = order.policy;
  const received = { channel: request.channel, cents: request.amountCents, defences: defencesOn(layers) };
  decide(span, 'request', 'received', () => reason('refundReceived', received));
  // 1-5. The refund's identity, then its defences, each around the rest.
  const attempt = attemptOf(request, order, options, span);
  const end = await guarded(
    refundDefencesFor(layers, attempt),
    attempt,
    (handed) => atTheBank(attempt, order, options, handed),
    FAILED_BEFORE_BANK,
  );
  if (end.kind === 'stopped' && end.failure !== undefined) throw end.failure;
  const { answer } = end;
  // What a duplicate of a finished refund is told: the first outcome, or (the lab's wrong answer) an error.
  if (answer.kind !== 'duplicate' || order.policy.duplicateAnswer === 'firstResult') return answer;
  return { kind: 'duplicate_refused', answeredBy: answer.answeredBy };
}

/** 5 + 6, inside every defence: the fault point and the claims checked again, then the bank, once. */
async function atTheBank(
  attempt: RefundAttempt,
  order: OrderToRefund,
  options: RefundOptions,
  { leases, toBank }: Handed,
): Promise<Ending<RefundAnswer, RefundOutcome>> {
  const lost = await stillHeld(leases, attempt, order.policy.faults, FAILED_BEFORE_BANK);
  if (lost) return lost;
  if (options.at) await options.at('pay.bank');
  const faults = { ...order.policy.bank, ...options.bankFaults };
  const { verdict, answer } = await callBankForRefund(attempt, { lease: leases.at(-1), toBank, faults });
  // The point after the bank's answer: the lab's "crash after charge" dies here too, having refunded.
  if (verdict.kind === 'settled') await order.policy.faults('pay.afterCharge', faultContext(attempt, leases));
  return { kind: 'banked', verdict, answer };
}

async function readOrder(orderNo: string): Promise<OrderRow | undefined> {
  const [order] = await getDb().$queryRaw<OrderRow[]>`
    SELECT amount_cents AS "amountCents", status, charge_id AS "chargeId", lab, owner, payers
    FROM orders WHERE order_no = ${orderNo}`;
  return order;
}

type OrderRow = {
  amountCents: number;
  status: string;
  chargeId: string | null;
  lab: unknown;
  owner: string | null;
  payers: string[];
};

/**
 * The order, if this caller may refund it: paid (with the policy it runs under), or its status and whether its payment
 * is still under way. An order its row says is not paid is first settled with the bank (settlePaymentNow): a payment
 * that charged and was answered, but whose record the database refused, is not told "not paid" to its refunds.
 */
async function orderFor(
  request: RefundRequest,
  span: Span,
  now: () => number,
): Promise<OrderToRefund | { status: string; underWay: boolean } | undefined> {
  let order = await readOrder(request.orderNo);
  if (!order || !mayUse(order, request.caller)) return undefined;
  if (order.owner) span.setAttribute(ATTR.owner, hashCaller(order.owner));
  if (order.status !== 'PAID' || !order.chargeId) {
    const { underWay } = await settlePaymentNow(request.orderNo, now);
    order = await readOrder(request.orderNo);
    if (!order) return undefined;
    // A claim taken since (the order PROCESSING or UNKNOWN now) is a payment under way too.
    const claimed = order.status === 'PROCESSING' || order.status === 'UNKNOWN';
    if (order.status !== 'PAID' || !order.chargeId) return { status: order.status, underWay: underWay || claimed };
  }
  const policy = await policySource().forOrder({ orderNo: request.orderNo, owner: order.owner, lab: order.lab });
  return { amountCents: order.amountCents, chargeId: order.chargeId, policy };
}

/** One refund attempt, as every defence sees it: its identity, and the recovery path they may call. */
function attemptOf(request: RefundRequest, order: OrderToRefund, options: RefundOptions, span: Span): RefundAttempt {
  const { orderNo, caller, amountCents, requestId } = request;
  const { now, at, attemptIds = newAttemptId } = options;
  const { leaseMs, release, refundKeyStrategy } = order.policy;
  const params = request.params ?? { orderNo, amountCents };
  const identity = refundIdentity(refundKeyStrategy, { caller, orderNo, amountCents, requestId, params });
  const ref = { orderNo, refundKey: identity.refundKey };
  return {
    orderNo,
    ...identity,
    chargeId: order.chargeId,
    amountCents,
    caller,
    attemptId: attemptIds(),
    leaseMs,
    release,
    resultTtlSeconds: options.resultTtlSeconds,
    now,
    at,
    span,
    recovery: {
      reconcile: (payer) => reconcileRefund(ref, { leaseMs, payer, now, at, attemptIds, parent: span }),
      askBankAfterTakeover: (query, seen) => askBankAfterRefundTakeover(query, seen, { now, at }),
      refundOfBankKey: (key) => refundOfBankKey(key, now),
    },
  };
}

function summarize(answer: RefundAnswer): Reason {
  switch (answer.kind) {
    case 'completed':
      return reason('refundOutcomeCompleted', { status: answer.outcome.status });
    case 'duplicate':
      return reason('outcomeDuplicate', { status: answer.outcome.status, answeredBy: answer.answeredBy });
    case 'in_progress':
      return reason('outcomeInProgress', { answeredBy: answer.answeredBy });
    case 'duplicate_refused':
      return reason('outcomeDuplicateRefused', { answeredBy: answer.answeredBy });
    case 'mismatch':
      return reason('outcomeMismatch');
    case 'failed_retryable':
      return reason('refundOutcomeFailedRetryable');
    case 'order_not_found':
      return reason('outcomeNoOrder');
    case 'not_paid':
      return reason('refundOutcomeNotPaid', { status: answer.status });
    case 'payment_in_progress':
      return reason('refundOutcomePaymentInProgress', { status: answer.status });
    case 'exceeds':
      return reason('refundOutcomeExceeds', { left: answer.leftCents });
    case 'amount_mismatch':
      return reason('refundOutcomeAmountMismatch', { cents: answer.refundAmountCents });
  }
}
