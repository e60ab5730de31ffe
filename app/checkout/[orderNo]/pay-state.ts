// What the checkout's server action returns: a typed union, one member per thing a customer can be told.
import type { PaymentOutcome } from '@/lib/payments/outcome';

export type FieldErrors = Partial<Record<'orderNo' | 'token', string>>;

export type PayState =
  | { status: 'idle'; token: string }
  /** This request charged the card. */
  | { status: 'paid'; outcome: PaymentOutcome & { status: 'PAID' }; requestId: string; token?: string }
  /** The bank refused the card: final, nothing charged. */
  | { status: 'failed_final'; outcome: PaymentOutcome & { status: 'DECLINED' }; requestId: string; token?: string }
  /** A duplicate, answered with the first request's outcome. */
  | { status: 'replayed'; outcome: PaymentOutcome; answeredBy: string; requestId: string; token?: string }
  /** Layer 1 refused this page's token (already used, expired, or another session's). */
  | { status: 'already_submitted'; current?: PaymentOutcome; requestId: string; token?: string }
  | { status: 'in_progress'; answeredBy: string; requestId: string; token?: string }
  | { status: 'mismatch'; requestId: string; token?: string }
  /** Nothing was charged and every claim was released: the new token lets the customer try again. */
  | { status: 'failed_retryable'; reason: string; requestId: string; token: string }
  /** This browser sent more payments in the last minute than one visitor may: nothing was done. */
  | { status: 'limited'; token?: string }
  /** Redis or the database is down: nothing was charged by this request. */
  | { status: 'unavailable'; service: string; token?: string }
  | { status: 'invalid'; errors: FieldErrors; token?: string };

export type Tone = 'ok' | 'info' | 'warn' | 'bad';

/** What the outcome region says, in words a customer understands, and which defence answered. */
export function describePayState(
  state: PayState,
  amount: string,
): { tone: Tone; title: string; body: string; answeredBy?: string } | undefined {
  switch (state.status) {
    case 'idle':
      return undefined;
    case 'paid':
      return { tone: 'ok', title: 'Payment successful', body: `Your card was charged ${amount}.`, answeredBy: 'bank' };
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
            body: `This order was already paid (${amount}). You were not charged again.`,
            answeredBy: state.answeredBy,
          }
        : {
            tone: 'bad',
            title: 'Card declined',
            body: `This payment was already declined (${state.outcome.reason}). Nothing was charged.`,
            answeredBy: state.answeredBy,
          };
    case 'already_submitted':
      return {
        tone: 'info',
        title: 'Already submitted',
        body:
          state.current?.status === 'PAID'
            ? `This page was already submitted, and the order is paid (${amount}). We did not send the payment again.`
            : 'This page was already submitted (or has expired). We did not send the payment again; the order status shows its progress.',
        answeredBy: 'token',
      };
    case 'in_progress':
      return {
        tone: 'warn',
        title: 'Payment in progress',
        body: 'Your payment is being processed. Wait a moment and check the order status; you will not be charged twice.',
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
