// What the checkout's server action returns: a typed union, one member per thing a customer can be told; and
// what the page says about it, as message keys and values (pure: the component translates them).
import type { MessageKeys, NestedKeyOf } from 'next-intl';
import type { PaymentOutcome } from '@/lib/defences/outcome';
import type { Messages } from '@/lib/i18n/messages';

/** Why the form could not be paid at all: the page says it in the reader's language. */
export type InvalidReason = 'form' | 'sessionExpired' | 'noSuchOrder';

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
  /** The first request is still running. `takenOver`: this was the first, and another took its claim over. */
  | ({ status: 'in_progress'; answeredBy: string; takenOver?: true; requestId: string; token?: string } & Seen)
  /** The lab's wrong answer to a duplicate: "already submitted", and nothing of what became of the first. */
  | ({ status: 'refused_duplicate'; answeredBy: string; requestId: string; token?: string } & Seen)
  | { status: 'mismatch'; requestId: string; token?: string }
  /**
   * The bank could not be reached before it charged: nothing moved, every claim was released, and the new
   * token lets the customer try again.
   */
  | { status: 'failed_retryable'; requestId: string; token: string }
  /**
   * The bank answered, then a step after it failed (a downstream notification): the card may have been
   * charged. A fresh token lets the page pay again, and what that retry finds is the release rule's doing.
   */
  | ({ status: 'failed_after_bank'; requestId: string; token: string } & Seen)
  /** The lab's "drop the response" fault: the order's first answer was held back until the page gave up. */
  | { status: 'no_answer'; token?: string }
  /**
   * The shop stopped answering while this payment ran (its process died: the lab's crash fault, or a real one):
   * the card may have been charged, and only the statement can say. Never "nothing was charged".
   */
  | { status: 'connection_lost'; token?: string }
  /** This browser sent more payments in the last minute than one visitor may: nothing was done. */
  | { status: 'limited'; token?: string }
  /** Redis or the database is down: nothing was charged by this request. */
  | { status: 'unavailable'; service: string; token?: string }
  | { status: 'invalid'; reason: InvalidReason; token?: string };

export type Tone = 'ok' | 'info' | 'warn' | 'bad';

/** A key of messages/<locale>/checkout.json (English's keys are the reference). */
export type CheckoutKey = MessageKeys<Messages['checkout'], NestedKeyOf<Messages['checkout']>>;

/**
 * A message for the component to translate: its key and its values. A value may itself be a message (the
 * title a request was told, a decline reason the page knows); `lower`: it stands inside a sentence, where
 * English writes it in lower case.
 */
export type MessageRef = { key: CheckoutKey; values?: Record<string, MessageValue>; lower?: boolean };
export type MessageValue = string | number | MessageRef;

export type OutcomeMessage = {
  tone: Tone;
  title: MessageRef;
  body: MessageRef;
  answeredBy?: string;
  /** A link that helps: "reload to pay". */
  reload?: boolean;
};

/** What the page knows besides the answer: whether a payment is in flight, and the order as it is now. */
export type PageFacts = {
  pending: boolean;
  order: { status: string; charges: Array<{ id: string }> };
};

/** Next-intl's `t` for the checkout's messages (or any function that puts a key and its values in words). */
export type CheckoutTranslator = (key: CheckoutKey, values?: Record<string, string | number>) => string;

/** A message in words: its values that are messages first, then the message (lower case inside a sentence). */
export function inWords(message: MessageRef, t: CheckoutTranslator, locale: string): string {
  const values =
    message.values &&
    Object.fromEntries(
      Object.entries(message.values).map(([name, value]) => [
        name,
        typeof value === 'object' ? inWords(value, t, locale) : value,
      ]),
    );
  const text = t(message.key, values);
  return message.lower ? text.toLocaleLowerCase(locale) : text;
}

/** "No charge yet." / "Charged once." / "Charged 2 times for one order!": the statement's words, everywhere. */
export function chargesInWords(count: number): MessageRef {
  if (count === 0) return { key: 'charges.none' };
  return count === 1 ? { key: 'charges.once' } : { key: 'charges.many', values: { count } };
}

/** The reasons the bank gives that the page can say in the reader's language; any other is shown as sent. */
const DECLINE_REASONS: Record<string, CheckoutKey> = {
  'insufficient funds': 'declineReasons.insufficientFunds',
  declined: 'declineReasons.declined',
};
const declineReason = (reason: string): MessageValue => {
  const key = DECLINE_REASONS[reason];
  return key ? { key } : reason;
};

/** A title and a body of the outcome region: `outcome.<topic>.title` and `outcome.<topic>.<body>`. */
function said(
  tone: Tone,
  title: CheckoutKey,
  body: CheckoutKey,
  values?: Record<string, MessageValue>,
  rest: Pick<OutcomeMessage, 'answeredBy' | 'reload'> = {},
): OutcomeMessage {
  return { tone, title: { key: title }, body: { key: body, ...(values ? { values } : {}) }, ...rest };
}

/**
 * What the outcome region says, as messages the component translates, and which defence answered. It never
 * contradicts the card statement: with more than one charge it says so first, whatever this request was told;
 * an answer of "in progress" becomes the order's final outcome once the order has one. `amount` is the
 * order's amount as the page shows it (formatted for the reader).
 */
export function describePayState(state: PayState, amount: string, facts: PageFacts): OutcomeMessage | undefined {
  if (facts.pending) return said('info', 'outcome.paying.title', 'outcome.paying.body');
  if (state.status === 'idle') return undefined;
  // "Paid" beside a statement that still says "no charge yet" (it reads the order a moment later): still
  // paying, as far as the screen can show, until the statement has the charge (issue 29).
  if (saysPaid(state) && facts.order.charges.length === 0) {
    return said('info', 'outcome.paying.title', 'outcome.paying.body');
  }
  const message = describeAnswer(state, amount, facts);
  const charges = Math.max(facts.order.charges.length, 'charges' in state ? (state.charges ?? 0) : 0);
  if (charges < 2) return message;
  return {
    tone: 'bad',
    title: { key: 'outcome.chargedTwice.title', values: { count: charges } },
    body: {
      key: 'outcome.chargedTwice.body',
      values: { amount, count: charges, told: { ...message.title, lower: true } },
    },
    answeredBy: message.answeredBy,
  };
}

/** Whether the answer itself says the order is paid (this request's charge, or the first one's replayed). */
function saysPaid(state: Exclude<PayState, { status: 'idle' }>): boolean {
  return state.status === 'paid' || (state.status === 'replayed' && state.outcome.status === 'PAID');
}

function describeAnswer(
  state: Exclude<PayState, { status: 'idle' }>,
  amount: string,
  facts: PageFacts,
): OutcomeMessage {
  switch (state.status) {
    case 'paid':
      return said(
        'ok',
        'outcome.paid.title',
        'outcome.paid.body',
        { amount, chargeId: state.outcome.chargeId },
        { answeredBy: 'bank' },
      );
    case 'failed_final':
      return said(
        'bad',
        'outcome.declined.title',
        'outcome.declined.body',
        { reason: declineReason(state.outcome.reason) },
        { answeredBy: 'bank' },
      );
    case 'replayed':
      return describeReplayed(state, amount);
    case 'already_submitted':
      return describeAlreadySubmitted(state, amount, facts);
    case 'in_progress':
      return describeInProgress(state, amount, facts);
    case 'refused_duplicate':
      return said('warn', 'outcome.refusedDuplicate.title', 'outcome.refusedDuplicate.body', undefined, {
        answeredBy: state.answeredBy,
      });
    case 'mismatch':
      return said('bad', 'outcome.mismatch.title', 'outcome.mismatch.body', undefined, { answeredBy: 'requestKey' });
    case 'failed_retryable':
      return said('bad', 'outcome.bankUnreachable.title', 'outcome.bankUnreachable.body', undefined, {
        answeredBy: 'bank',
      });
    case 'failed_after_bank':
      return said('bad', 'outcome.failedAfterBank.title', 'outcome.failedAfterBank.body', undefined, {
        answeredBy: 'bank',
      });
    case 'no_answer':
      return said('warn', 'outcome.noAnswer.title', 'outcome.noAnswer.body', undefined, { reload: true });
    case 'connection_lost':
      return said('warn', 'outcome.noAnswer.title', 'outcome.connectionLost.body', undefined, { reload: true });
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

/** A replay of the first outcome: paid or declined, by the layer that answered. */
function describeReplayed(state: Extract<PayState, { status: 'replayed' }>, amount: string): OutcomeMessage {
  return state.outcome.status === 'PAID'
    ? said(
        'ok',
        'outcome.alreadyPaid.title',
        'outcome.alreadyPaid.body',
        { amount, chargeId: state.outcome.chargeId },
        { answeredBy: state.answeredBy },
      )
    : said(
        'bad',
        'outcome.alreadyDeclined.title',
        'outcome.alreadyDeclined.body',
        { reason: declineReason(state.outcome.reason) },
        { answeredBy: state.answeredBy },
      );
}

/**
 * Layer 1 refused the token: an expired page (reload), or a resubmit of a page that already paid or is paying.
 * A first submit whose token was already spent is an expired page only while the order is untouched: a
 * gateway that re-sent the same form to another instance (the cluster) spent it with the first delivery, which
 * may be charging, and the customer must not be told "nothing was sent, reload to pay" beside a charge.
 */
function describeAlreadySubmitted(
  state: Extract<PayState, { status: 'already_submitted' }>,
  amount: string,
  facts: PageFacts,
): OutcomeMessage {
  const untouched = facts.order.status === 'PENDING' && facts.order.charges.length === 0 && !state.current;
  if (!state.resubmit && untouched) {
    return said('warn', 'outcome.expired.title', 'outcome.expired.body', undefined, {
      answeredBy: 'token',
      reload: true,
    });
  }
  return facts.order.status === 'PAID' || state.current?.status === 'PAID'
    ? said(
        'info',
        'outcome.alreadySubmitted.title',
        'outcome.alreadySubmitted.bodyPaid',
        { amount },
        { answeredBy: 'token' },
      )
    : said('info', 'outcome.alreadySubmitted.title', 'outcome.alreadySubmitted.body', undefined, {
        answeredBy: 'token',
      });
}

/** The first request is still running; once it finishes, the answer turns into the order's outcome. */
function describeInProgress(
  state: Extract<PayState, { status: 'in_progress' }>,
  amount: string,
  facts: PageFacts,
): OutcomeMessage {
  const { answeredBy, takenOver } = state;
  // The first request is told another took its claim over; a duplicate, that it waited for the first.
  const told = takenOver ? TAKEN_OVER : WAITED;
  if (facts.order.status === 'PAID') {
    const firstCharge = facts.order.charges[0]?.id;
    return firstCharge
      ? said('ok', 'outcome.firstPaid.title', told.paid, { amount, chargeId: firstCharge }, { answeredBy })
      : said('ok', 'outcome.firstPaid.title', told.paidNoCharge, { amount }, { answeredBy });
  }
  if (facts.order.status === 'DECLINED') {
    return said('bad', 'outcome.firstDeclined.title', told.declined, undefined, { answeredBy });
  }
  return said('warn', 'outcome.inProgress.title', told.inProgress, undefined, { answeredBy });
}

const WAITED = {
  paid: 'outcome.firstPaid.body',
  paidNoCharge: 'outcome.firstPaid.bodyNoCharge',
  declined: 'outcome.firstDeclined.body',
  inProgress: 'outcome.inProgress.body',
} as const;
const TAKEN_OVER = {
  paid: 'outcome.takenOver.body',
  paidNoCharge: 'outcome.takenOver.bodyNoCharge',
  declined: 'outcome.takenOver.declined',
  inProgress: 'outcome.takenOver.inProgress',
} as const;
