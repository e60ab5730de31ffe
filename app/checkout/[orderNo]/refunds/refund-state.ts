// What the refund form's server action returns: a typed union, one member per thing the back office can be told;
// how the pipeline's answer becomes one; and what the page says about it, as message keys and values (pure: the
// component translates them). Like the checkout's outcome, it never contradicts the statement beside it.
import type { MessageKeys, NestedKeyOf } from 'next-intl';
import type { RefundAnswer } from '@/lib/defences/refund';
import type { Messages } from '@/lib/i18n/messages';

/** Why the form could not be refunded at all: the page says it in the reader's language. */
export type InvalidReason = 'form' | 'amount' | 'sessionExpired' | 'noSuchOrder' | 'noSuchRefund';

export type RefundState =
  | { status: 'idle' }
  /** This submit made the refund: the bank refunded it. */
  | { status: 'refunded'; amountCents: number; refundId: string; answeredBy: string }
  /** A submit of this refund had been sent before: its first result, replayed (nothing refunded again). */
  | { status: 'first_result'; amountCents: number; refundId: string; answeredBy: string }
  /** The bank refused the refund (final): by this submit, or by the first (`first`). */
  | { status: 'refused_by_bank'; amountCents: number; first: boolean; answeredBy: string }
  /** An earlier submit of this refund is still running. `takenOver`: this one was it, and lost its claim. */
  | { status: 'in_progress'; answeredBy: string; takenOver?: true }
  /** The ledger refused it before the bank: more than is left to refund. */
  | { status: 'exceeds'; leftCents: number }
  | { status: 'not_paid' }
  /** The order's payment is still running, or in doubt until the bank can tell: the same form may submit again. */
  | { status: 'payment_in_progress' }
  /** This refund's id was recorded with another amount (`amountCents`, when the record says which). */
  | { status: 'amount_mismatch'; amountCents?: number }
  /** The lab's wrong answer to a duplicate: "already submitted", and nothing of what became of the first. */
  | { status: 'already_submitted'; answeredBy: string }
  /** The bank could not be reached before it refunded: nothing moved, the same form may submit again. */
  | { status: 'failed_retryable' }
  /** The shop stopped answering while the refund ran (its process died): only the statement can say. */
  | { status: 'connection_lost' }
  | { status: 'limited' }
  | { status: 'unavailable'; service: 'database' | 'redis' }
  | { status: 'invalid'; reason: InvalidReason };

/** What the page is told of the pipeline's answer: expected outcomes are values, never throws. */
export function refundStateOf(answer: RefundAnswer): RefundState {
  switch (answer.kind) {
    case 'completed':
    case 'duplicate': {
      const first = answer.kind === 'duplicate';
      const answeredBy = answer.kind === 'duplicate' ? answer.answeredBy : 'bank';
      const { outcome } = answer;
      if (outcome.status === 'FAILED') {
        return { status: 'refused_by_bank', amountCents: outcome.amountCents, first, answeredBy };
      }
      const made = { amountCents: outcome.amountCents, refundId: outcome.refundId, answeredBy };
      return first ? { status: 'first_result', ...made } : { status: 'refunded', ...made };
    }
    case 'in_progress':
      return { status: 'in_progress', answeredBy: answer.answeredBy, ...(answer.takenOver ? { takenOver: true } : {}) };
    case 'duplicate_refused':
      return { status: 'already_submitted', answeredBy: answer.answeredBy };
    case 'mismatch':
      return { status: 'amount_mismatch' };
    case 'amount_mismatch':
      return { status: 'amount_mismatch', amountCents: answer.refundAmountCents };
    case 'exceeds':
      return { status: 'exceeds', leftCents: answer.leftCents };
    case 'not_paid':
      return { status: 'not_paid' };
    case 'payment_in_progress':
      return { status: 'payment_in_progress' };
    case 'failed_retryable':
      return { status: 'failed_retryable' };
    case 'order_not_found':
      return { status: 'invalid', reason: 'noSuchOrder' };
  }
}

const AMOUNT = /^\s*(?:US)?\$?\s*(\d{1,7})(?:\.(\d{1,2}))?\s*$/;

/** Dollars as typed ("5", "5.5", "5.00", "$5.00") in integer cents; undefined unless positive, ≤ $1,000,000, 2 decimals. */
export function centsOf(amount: string): number | undefined {
  const match = AMOUNT.exec(amount);
  if (!match) return undefined;
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return cents > 0 && cents <= 100_000_000 ? cents : undefined;
}

/** What is left to refund: the order's amount less the merchant's ledger (refunds made, under way or in doubt). */
export function leftToRefund(order: { amountCents: number; refundedCents: number }): number {
  return Math.max(0, order.amountCents - order.refundedCents);
}

export type Tone = 'ok' | 'info' | 'warn' | 'bad';

/** A key of messages/<locale>/refunds.json (English's keys are the reference). */
export type RefundsKey = MessageKeys<Messages['refunds'], NestedKeyOf<Messages['refunds']>>;

/** What the outcome region says: a title, a body (which may hold <code>) and its values, and who answered. */
export type RefundMessage = {
  tone: Tone;
  title: RefundsKey;
  body: RefundsKey;
  values?: Record<string, string | number>;
  answeredBy?: string;
};

/** What the page knows besides the answer: whether a refund is in flight, and the refunds on the statement. */
export type RefundFacts = { pending: boolean; refundIds: readonly string[] };

/** Amounts as the page writes them (formatCents in the reader's language). */
export type Money = (cents: number) => string;

/** A title and a body of the outcome region, with the body's values and who answered. */
function said(
  tone: Tone,
  title: RefundsKey,
  body: RefundsKey,
  values?: RefundMessage['values'],
  answeredBy?: string,
): RefundMessage {
  return { tone, title, body, ...(values ? { values } : {}), ...(answeredBy ? { answeredBy } : {}) };
}

const REFUNDING = said('info', 'outcome.refunding.title', 'outcome.refunding.body');

/**
 * What the outcome region says, as messages the component translates. "Refunded" waits for the statement: while
 * it does not show the refund yet (it reads the order a moment later), the outcome still says "Refunding…".
 */
export function describeRefundState(state: RefundState, facts: RefundFacts, money: Money): RefundMessage | undefined {
  if (facts.pending) return REFUNDING;
  switch (state.status) {
    case 'idle':
      return undefined;
    case 'refunded':
    case 'first_result': {
      if (!facts.refundIds.includes(state.refundId)) return REFUNDING;
      const values = { amount: money(state.amountCents), refundId: state.refundId };
      return state.status === 'refunded'
        ? said('ok', 'outcome.refunded.title', 'outcome.refunded.body', values, state.answeredBy)
        : said('ok', 'outcome.firstResult.title', 'outcome.firstResult.body', values, state.answeredBy);
    }
    case 'refused_by_bank':
      return said(
        'bad',
        'outcome.refused.title',
        state.first ? 'outcome.refused.bodyFirst' : 'outcome.refused.body',
        { amount: money(state.amountCents) },
        state.answeredBy,
      );
    default:
      return describeRefusal(state, money);
  }
}

/** Every answer that refunded nothing (this time): why, and what to do. */
function describeRefusal(
  state: Exclude<RefundState, { status: 'idle' | 'refunded' | 'first_result' | 'refused_by_bank' }>,
  money: Money,
): RefundMessage {
  switch (state.status) {
    case 'in_progress':
      return said(
        'warn',
        'outcome.inProgress.title',
        state.takenOver ? 'outcome.inProgress.takenOver' : 'outcome.inProgress.body',
        undefined,
        state.answeredBy,
      );
    case 'exceeds':
      return said('bad', 'outcome.exceeds.title', 'outcome.exceeds.body', { left: money(state.leftCents) });
    case 'not_paid':
      return said('bad', 'outcome.notPaid.title', 'outcome.notPaid.body');
    case 'payment_in_progress':
      return said('warn', 'outcome.paymentInProgress.title', 'outcome.paymentInProgress.body');
    case 'amount_mismatch':
      return state.amountCents === undefined
        ? said('bad', 'outcome.amountMismatch.title', 'outcome.amountMismatch.bodyUnknown', undefined, 'requestKey')
        : said('bad', 'outcome.amountMismatch.title', 'outcome.amountMismatch.body', {
            amount: money(state.amountCents),
          });
    case 'already_submitted':
      return said(
        'warn',
        'outcome.alreadySubmitted.title',
        'outcome.alreadySubmitted.body',
        undefined,
        state.answeredBy,
      );
    case 'failed_retryable':
      return said('bad', 'outcome.failedRetryable.title', 'outcome.failedRetryable.body', undefined, 'bank');
    case 'connection_lost':
      return said('warn', 'outcome.connectionLost.title', 'outcome.connectionLost.body');
    case 'limited':
      return said('warn', 'outcome.limited.title', 'outcome.limited.body');
    case 'unavailable':
      return said(
        'bad',
        'outcome.unavailable.title',
        state.service === 'redis' ? 'outcome.unavailable.bodyRedis' : 'outcome.unavailable.bodyDatabase',
      );
    case 'invalid':
      return said('bad', 'outcome.invalid.title', `outcome.invalid.${state.reason}`);
  }
}

/** The statement's words for the number of refunds: "No refund yet." / "Refunded once." / "Refunded 2 times." */
export function refundsInWords(count: number): { key: RefundsKey; values?: { count: number } } {
  if (count === 0) return { key: 'statement.none' };
  return count === 1 ? { key: 'statement.once' } : { key: 'statement.many', values: { count } };
}
