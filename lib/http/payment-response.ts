// POST /api/payments: a pipeline result as an HTTP response (Stripe's and the IETF Idempotency-Key
// draft's semantics). Pure, so every mapping is unit-tested.
import type { PaymentOutcome } from '../defences/outcome.ts';
import type { PayResult } from '../payments/pay.ts';
import { keyReusedProblem } from './idempotency-key.ts';
import { json, problem, say } from './problem.ts';

/** The first response for an outcome. A replay is this, byte for byte, plus Idempotent-Replayed. */
export function outcomeResponse(outcome: PaymentOutcome, headers: Record<string, string>): Response {
  if (outcome.status === 'PAID') return json(canonicalOutcome(outcome), 201, headers);
  return problem(
    402,
    'card-declined',
    'Card declined',
    // The payment's own status is `paymentStatus`: a problem's `status` is the HTTP status (RFC 9457).
    {
      detail: say('details.cardDeclined', { reason: outcome.reason }),
      orderNo: outcome.orderNo,
      amountCents: outcome.amountCents,
      reason: outcome.reason,
      paymentStatus: outcome.status,
    },
    headers,
  );
}

/**
 * Every "in progress" says: retry after 1 s, even when the outcome may take the bank's whole settlement
 * window (10 s) to be known. Clients compare Retry-After with their own timeout and give up when it is
 * longer (got: `maxRetryAfter` defaults to the request timeout), so a longer one ends the retries before the
 * outcome is known. A short one costs a few cheap requests (docs/decisions/014-answers-in-doubt.md).
 */
export const RETRY_AFTER_SECONDS = 1;

/**
 * A payment's outcome with its fields in one order, the schema's, wherever it was read from (replays are
 * byte-identical), and nothing else. Written out rather than parsed again by the schema: every outcome here has
 * been made by the pipeline or read back through the schema already, and a parse a payment is about 5 µs of CPU
 * (decision 038). A test holds the order to the schema's.
 */
export function canonicalOutcome(outcome: PaidOutcome): PaidOutcome {
  const { status, orderNo, amountCents, chargeId, paidAt } = outcome;
  return { status, orderNo, amountCents, chargeId, paidAt };
}
type PaidOutcome = Extract<PaymentOutcome, { status: 'PAID' }>;

/** `extra`: headers every answer carries (Preference-Applied, when the request waited for the first outcome). */
export function paymentResponse(result: PayResult, extra: Record<string, string> = {}): Response {
  const headers: Record<string, string> = { 'x-request-id': result.requestId, ...extra };
  switch (result.kind) {
    case 'completed':
      return outcomeResponse(result.outcome, { ...headers, 'x-answered-by': 'bank' });
    case 'duplicate': {
      // The intent's own payment, made by an earlier attempt, is a replay; so is anything layer 2 answers
      // from its stored answer: both carry Idempotent-Replayed. The status is the first answer's: 201 for the
      // intent's own payment (402 if declined), 200 for a payment another intent made (layers 3-5 stopped a
      // second key, or Redis forgot).
      const replayed = !result.existing || result.answeredBy === 'requestKey';
      const answer = {
        ...headers,
        'x-answered-by': result.answeredBy,
        ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
      };
      return result.existing && result.outcome.status === 'PAID'
        ? json(canonicalOutcome(result.outcome), 200, answer)
        : outcomeResponse(result.outcome, answer);
    }
    default:
      return refusalResponse(result, headers);
  }
}

/** Every answer but a payment's outcome: in progress, refused, failed, not found, as problems. */
function refusalResponse(
  result: Exclude<PayResult, { kind: 'completed' | 'duplicate' }>,
  headers: Record<string, string>,
): Response {
  switch (result.kind) {
    case 'in_progress':
      return problem(
        409,
        'payment-in-progress',
        'Payment in progress',
        {
          detail: say('details.paymentInProgress'),
          answeredBy: result.answeredBy,
        },
        { ...headers, 'retry-after': String(RETRY_AFTER_SECONDS), 'x-answered-by': result.answeredBy },
      );
    case 'duplicate_refused':
      // The lab's wrong answer to a duplicate: no result, so a retrying client cannot tell this from "in
      // progress" and retries until its budget is spent, never learning what became of its payment.
      return problem(
        409,
        'duplicate-request',
        'Duplicate request',
        { detail: say('details.duplicateRequest'), answeredBy: result.answeredBy },
        { ...headers, 'retry-after': String(RETRY_AFTER_SECONDS), 'x-answered-by': result.answeredBy },
      );
    case 'mismatch':
      // The key names another intent: another body, or another operation (a key is bound to its endpoint).
      return keyReusedProblem(result.usedOn, 'payment', { ...headers, 'x-answered-by': 'requestKey' });
    case 'failed_retryable':
      return problem(
        503,
        'bank-unavailable',
        'Bank unavailable',
        { detail: say('details.bankUnavailable', { reason: result.reason }) },
        { ...headers, 'retry-after': '1', 'x-answered-by': 'bank' },
      );
    case 'failed_after_bank':
      // The bank answered, then a later step threw: the outcome is on the key (under the right release rule).
      return problem(
        500,
        'failed-after-bank',
        'Payment failed after the bank answered',
        { detail: say('details.failedAfterBank') },
        { ...headers, 'retry-after': String(RETRY_AFTER_SECONDS), 'x-answered-by': 'bank' },
      );
    case 'order_not_found':
      return problem(404, 'order-not-found', 'Order not found', { detail: say('details.noSuchOrder') }, headers);
    case 'amount_mismatch':
      return problem(
        422,
        'amount-mismatch',
        'Amount does not match the order',
        {
          detail: say('details.amountMismatch', { amount: String(result.orderAmountCents) }),
          errors: [
            { field: 'amountCents', message: say('fields.orderAmount', { amount: String(result.orderAmountCents) }) },
          ],
        },
        headers,
      );
    case 'already_submitted':
      return problem(
        409,
        'already-submitted',
        'Checkout token already used',
        {
          detail: say('details.alreadySubmitted'),
          errors: [{ field: 'Checkout-Token', message: say('fields.tokenSpent') }],
        },
        { ...headers, 'x-answered-by': 'token' },
      );
  }
}
