// What the checkout's server action returns: a typed union, one member per thing a customer can be told.
import type { PaymentOutcome } from '@/lib/payments/outcome';

export type FieldErrors = Partial<Record<'orderNo' | 'token', string>>;

/** What the card network had recorded for the order when the answer was made: the outcome says it too. */
type Seen = { charges?: number };

export type PayState =
  | { status: 'idle'; token: string }
  /** This request charged the card. */
  | ({ status: 'paid'; outcome: PaymentOutcome & { status: 'PAID' }; requestId: string; token?: string } & Seen)
  /** The bank refused the card: final, nothing charged. */
  | ({
      status: 'failed_final';
      outcome: PaymentOutcome & { status: 'DECLINED' };
      requestId: string;
      token?: string;
    } & Seen)
  /** A duplicate, answered with the first request's outcome. */
  | ({ status: 'replayed'; outcome: PaymentOutcome; answeredBy: string; requestId: string; token?: string } & Seen)
  /**
   * Layer 1 refused this page's token (already used, expired, or another session's). `resubmit`: this page
   * had sent that token before (a second click); otherwise the page is stale and must be reloaded.
   */
  | ({
      status: 'already_submitted';
      current?: PaymentOutcome;
      resubmit: boolean;
      requestId: string;
      token?: string;
    } & Seen)
  | ({ status: 'in_progress'; answeredBy: string; requestId: string; token?: string } & Seen)
  | { status: 'mismatch'; requestId: string; token?: string }
  /** Nothing was charged and every claim was released: the new token lets the customer try again. */
  | { status: 'failed_retryable'; reason: string; requestId: string; token: string }
  /** The lab's "drop the response" fault: the order's first answer was held back until the page gave up. */
  | { status: 'no_answer'; token?: string }
  /** This browser sent more payments in the last minute than one visitor may: nothing was done. */
  | { status: 'limited'; token?: string }
  /** Redis or the database is down: nothing was charged by this request. */
  | { status: 'unavailable'; service: string; token?: string }
  | { status: 'invalid'; errors: FieldErrors; token?: string };

export type Tone = 'ok' | 'info' | 'warn' | 'bad';

export type OutcomeMessage = {
  tone: Tone;
  title: string;
  body: string;
  answeredBy?: string;
  /** A link that helps: "reload to pay". */
  reload?: boolean;
};

/** What the page knows besides the answer: whether a payment is in flight, and the order as it is now. */
export type PageFacts = {
  pending: boolean;
  order: { status: string; charges: Array<{ id: string }> };
};

/**
 * What the outcome region says, in words a customer understands, and which defence answered. It never
 * contradicts the card statement: with more than one charge it says so first, whatever this request was told;
 * an answer of "in progress" becomes the order's final outcome once the order has one.
 */
export function describePayState(state: PayState, amount: string, facts: PageFacts): OutcomeMessage | undefined {
  if (facts.pending) {
    return { tone: 'info', title: 'Paying…', body: 'Your payment is on its way to the bank. Do not close this page.' };
  }
  if (state.status === 'idle') return undefined;
  const message = describeAnswer(state, amount, facts);
  const charges = Math.max(facts.order.charges.length, 'charges' in state ? (state.charges ?? 0) : 0);
  if (charges < 2) return message;
  return {
    tone: 'bad',
    title: `Charged ${charges} times for one order!`,
    body: `Your card was charged ${amount} ${charges} times: a duplicate got through the defences that were off. This request was told: ${message.title.toLowerCase()}.`,
    answeredBy: message.answeredBy,
  };
}

function describeAnswer(
  state: Exclude<PayState, { status: 'idle' }>,
  amount: string,
  facts: PageFacts,
): OutcomeMessage {
  const firstCharge = facts.order.charges[0]?.id;
  switch (state.status) {
    case 'paid':
      return {
        tone: 'ok',
        title: 'Payment successful',
        body: `Your card was charged ${amount} (charge ${state.outcome.chargeId}).`,
        answeredBy: 'bank',
      };
    case 'failed_final':
      return {
        tone: 'bad',
        title: 'Card declined',
        body: `Your bank declined the payment (${state.outcome.reason}). Nothing was charged.`,
        answeredBy: 'bank',
      };
    case 'replayed':
      return state.outcome.status === 'PAID'
        ? {
            tone: 'ok',
            title: 'Already paid',
            body: `This order was already paid: ${amount}, charge ${state.outcome.chargeId}, the first payment’s. You were not charged again.`,
            answeredBy: state.answeredBy,
          }
        : {
            tone: 'bad',
            title: 'Card declined',
            body: `This payment was already declined (${state.outcome.reason}). Nothing was charged.`,
            answeredBy: state.answeredBy,
          };
    case 'already_submitted':
      if (!state.resubmit) {
        return {
          tone: 'warn',
          title: 'This page expired',
          body: 'This page expired: reload to pay. Its one-time token was used up or ran out, so nothing was sent to the bank.',
          answeredBy: 'token',
          reload: true,
        };
      }
      return {
        tone: 'info',
        title: 'Already submitted',
        body:
          facts.order.status === 'PAID' || state.current?.status === 'PAID'
            ? `This page was already submitted, and the order is paid (${amount}). We did not send the payment again.`
            : 'This page was already submitted. We did not send the payment again; the order status shows its progress.',
        answeredBy: 'token',
      };
    case 'in_progress':
      // The first request finishes meanwhile: the answer turns into the order's outcome.
      if (facts.order.status === 'PAID') {
        return {
          tone: 'ok',
          title: 'Payment successful',
          body: `The first request’s payment went through: ${amount}${firstCharge ? `, charge ${firstCharge}` : ''}. This one waited for it and did not charge again.`,
          answeredBy: state.answeredBy,
        };
      }
      if (facts.order.status === 'DECLINED') {
        return {
          tone: 'bad',
          title: 'Card declined',
          body: 'The first request’s payment was declined. Nothing was charged.',
          answeredBy: state.answeredBy,
        };
      }
      return {
        tone: 'warn',
        title: 'Payment in progress',
        body: 'Your payment is being processed. This updates when it is done; you will not be charged twice.',
        answeredBy: state.answeredBy,
      };
    case 'mismatch':
      return {
        tone: 'bad',
        title: 'Request mismatch',
        body: 'This request does not match the original payment. Nothing was charged.',
        answeredBy: 'requestKey',
      };
    case 'failed_retryable':
      return { tone: 'bad', title: 'Payment failed', body: `${state.reason} You can try again.`, answeredBy: 'bank' };
    case 'no_answer':
      return {
        tone: 'warn',
        title: 'No answer',
        body: 'The answer to this payment never arrived (the lab’s “drop the response” fault). Reload to see where it stands.',
        reload: true,
      };
    case 'limited':
      return {
        tone: 'warn',
        title: 'Too many payments',
        body: 'This browser sent more payments in the last minute than one visitor may. Nothing was charged; wait a minute.',
      };
    case 'unavailable':
      return {
        tone: 'bad',
        title: 'Service unavailable',
        body: `Our ${state.service === 'redis' ? 'payment guard' : 'database'} is unavailable. Nothing was charged by this attempt; try again shortly.`,
      };
    case 'invalid':
      return { tone: 'bad', title: 'Cannot pay', body: Object.values(state.errors).join('; ') || 'Reload the page.' };
  }
}
