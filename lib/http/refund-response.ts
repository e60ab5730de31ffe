// POST /api/refunds: a refund pipeline's result as an HTTP response, with the payments' semantics (Stripe's and the
// IETF Idempotency-Key draft's; payment-response.ts): the first answer 201, a replay the same status and bytes with
// Idempotent-Replayed, "in progress" 409 with Retry-After. Pure, so every mapping is unit-tested.
import { type RefundOutcome, RefundOutcomeSchema } from '../defences/refund.ts';
import type { RefundResult } from '../refunds/refund.ts';
import { keyReusedProblem } from './idempotency-key.ts';
import { RETRY_AFTER_SECONDS } from './payment-response.ts';
import { json, problem, say } from './problem.ts';

/** The first response for an outcome: 201 for a refund made, 422 for one the bank refused (both stored). */
export function refundOutcomeResponse(outcome: RefundOutcome, headers: Record<string, string>): Response {
  if (outcome.status === 'SUCCEEDED') return json(RefundOutcomeSchema.parse(outcome), 201, headers);
  return problem(
    422,
    'refund-refused',
    'Refund refused by the bank',
    {
      detail: say('details.refundRefused'),
      orderNo: outcome.orderNo,
      amountCents: outcome.amountCents,
      reason: outcome.reason,
      refundStatus: outcome.status,
    },
    headers,
  );
}

export function refundResponse(result: RefundResult): Response {
  const headers: Record<string, string> = { 'x-request-id': result.laneId };
  switch (result.kind) {
    case 'completed':
      return refundOutcomeResponse(result.outcome, { ...headers, 'x-answered-by': 'bank' });
    case 'duplicate': {
      // As a payment's: the refund's own (made by an earlier attempt of this intent) or anything layer 2 answers
      // from its stored answer is a replay; a refund another intent made (a wrong key strategy merged them) is 200.
      const replayed = !result.existing || result.answeredBy === 'requestKey';
      const answer = {
        ...headers,
        'x-answered-by': result.answeredBy,
        ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
      };
      return result.existing && result.outcome.status === 'SUCCEEDED'
        ? json(RefundOutcomeSchema.parse(result.outcome), 200, answer)
        : refundOutcomeResponse(result.outcome, answer);
    }
    default:
      return refusalResponse(result, headers);
  }
}

function refusalResponse(
  result: Exclude<RefundResult, { kind: 'completed' | 'duplicate' }>,
  headers: Record<string, string>,
): Response {
  const inProgress = { ...headers, 'retry-after': String(RETRY_AFTER_SECONDS) };
  switch (result.kind) {
    case 'in_progress':
      return problem(
        409,
        'refund-in-progress',
        'Refund in progress',
        { detail: say('details.refundInProgress'), answeredBy: result.answeredBy },
        { ...inProgress, 'x-answered-by': result.answeredBy },
      );
    case 'duplicate_refused':
      return problem(
        409,
        'duplicate-request',
        'Duplicate request',
        { detail: say('details.duplicateRequest'), answeredBy: result.answeredBy },
        { ...inProgress, 'x-answered-by': result.answeredBy },
      );
    case 'mismatch':
      return keyReusedProblem(result.usedOn, 'refund', { ...headers, 'x-answered-by': 'requestKey' });
    case 'failed_retryable':
      return problem(
        503,
        'bank-unavailable',
        'Bank unavailable',
        { detail: say('details.bankUnavailable', { reason: result.reason }) },
        { ...headers, 'retry-after': '1', 'x-answered-by': 'bank' },
      );
    case 'order_not_found':
      return problem(404, 'order-not-found', 'Order not found', { detail: say('details.noSuchOrder') }, headers);
    case 'not_paid':
      return problem(
        422,
        'order-not-paid',
        'The order is not paid',
        { detail: say('details.orderNotPaid', { status: result.status }), orderStatus: result.status },
        headers,
      );
    case 'payment_in_progress':
      return problem(
        409,
        'payment-in-progress',
        'Payment in progress',
        { detail: say('details.refundPaymentUnsettled', { status: result.status }), orderStatus: result.status },
        inProgress,
      );
    case 'exceeds':
      return problem(
        422,
        'refund-exceeds-charge',
        'More than is left to refund',
        {
          detail: say('details.refundExceeds', { left: String(result.leftCents) }),
          leftCents: result.leftCents,
          errors: [{ field: 'amountCents', message: say('fields.refundAtMost', { left: String(result.leftCents) }) }],
        },
        headers,
      );
    case 'amount_mismatch':
      return problem(
        422,
        'refund-amount-mismatch',
        'This refund is for another amount',
        {
          detail: say('details.refundAmountMismatch', { amount: String(result.refundAmountCents) }),
          errors: [
            { field: 'amountCents', message: say('fields.refundAmount', { amount: String(result.refundAmountCents) }) },
          ],
        },
        headers,
      );
  }
}
