// What the refund form's outcome region says, in both languages: each answer of the refund pipeline as a state,
// and the state in words as the page puts it (next-intl's translator over the real messages), so a missing key, a
// value a message needs, or "refunded" said beside a statement without the refund fails here, before a browser runs.
import { createTranslator } from 'next-intl';
import { describe, expect, it } from 'vitest';
import type { RefundAnswer } from '@/lib/defences/refund';
import { formatCents } from '@/lib/format';
import { LOCALES, type Locale } from '@/lib/i18n/locales';
import { MESSAGES } from '@/lib/i18n/messages';
import {
  centsOf,
  describeRefundState,
  leftToRefund,
  type RefundFacts,
  type RefundState,
  refundStateOf,
  refundsInWords,
} from './refund-state';

function wordsIn(locale: Locale) {
  const t = createTranslator({
    locale,
    messages: MESSAGES[locale],
    namespace: 'refunds',
    onError: (error) => {
      throw error; // a key either language lacks, a value a message needs
    },
  });
  const money = (cents: number) => formatCents(cents, locale);
  /** The outcome's title and body as the page shows them (<code> kept as its words). */
  return (state: RefundState, facts: RefundFacts) => {
    const message = describeRefundState(state, facts, money);
    if (!message) return undefined;
    const body = t.markup(message.body, { ...message.values, code: (words) => words });
    return { title: t(message.title), body, message };
  };
}
const en = wordsIn('en');
const zh = wordsIn('zh-CN');

const settled = (...refundIds: string[]): RefundFacts => ({ pending: false, refundIds });
const SUCCEEDED = {
  status: 'SUCCEEDED',
  orderNo: 'ord_1',
  amountCents: 500,
  refundId: 're_1',
  refundedAt: '2026-01-01T00:00:00Z',
} as const;
const FAILED = { status: 'FAILED', orderNo: 'ord_1', amountCents: 500, reason: 'exceedsCharge' } as const;

describe('the pipeline’s answer, as the form’s state', () => {
  it('a refund made by this submit, and the first result replayed to a resubmit', () => {
    expect(refundStateOf({ kind: 'completed', outcome: SUCCEEDED })).toEqual({
      status: 'refunded',
      amountCents: 500,
      refundId: 're_1',
      answeredBy: 'bank',
    });
    expect(refundStateOf({ kind: 'duplicate', outcome: SUCCEEDED, answeredBy: 'requestKey', existing: false })).toEqual(
      { status: 'first_result', amountCents: 500, refundId: 're_1', answeredBy: 'requestKey' },
    );
  });

  it('the bank’s refusal, by this submit or by the first', () => {
    expect(refundStateOf({ kind: 'completed', outcome: FAILED })).toMatchObject({
      status: 'refused_by_bank',
      first: false,
    });
    expect(refundStateOf({ kind: 'duplicate', outcome: FAILED, answeredBy: 'stateMachine', existing: true })).toEqual({
      status: 'refused_by_bank',
      amountCents: 500,
      first: true,
      answeredBy: 'stateMachine',
    });
  });

  it('every refusal is a value', () => {
    const cases: Array<[RefundAnswer, RefundState]> = [
      [
        { kind: 'in_progress', answeredBy: 'requestKey', takenOver: true },
        { status: 'in_progress', answeredBy: 'requestKey', takenOver: true },
      ],
      [
        { kind: 'in_progress', answeredBy: 'stateMachine' },
        { status: 'in_progress', answeredBy: 'stateMachine' },
      ],
      [
        { kind: 'duplicate_refused', answeredBy: 'requestKey' },
        { status: 'already_submitted', answeredBy: 'requestKey' },
      ],
      [{ kind: 'mismatch' }, { status: 'amount_mismatch' }],
      [
        { kind: 'amount_mismatch', refundAmountCents: 700 },
        { status: 'amount_mismatch', amountCents: 700 },
      ],
      [
        { kind: 'exceeds', leftCents: 1_200 },
        { status: 'exceeds', leftCents: 1_200 },
      ],
      [{ kind: 'not_paid', status: 'PENDING' }, { status: 'not_paid' }],
      [{ kind: 'failed_retryable', reason: 'bank down' }, { status: 'failed_retryable' }],
      [{ kind: 'order_not_found' }, { status: 'invalid', reason: 'noSuchOrder' }],
    ];
    for (const [answer, state] of cases) expect(refundStateOf(answer), answer.kind).toEqual(state);
  });
});

describe('the outcome of a refund, in words', () => {
  const refunded: RefundState = { status: 'refunded', amountCents: 500, refundId: 're_1', answeredBy: 'bank' };
  const firstResult: RefundState = { ...refunded, status: 'first_result', answeredBy: 'requestKey' };

  it('refunded: the amount and the bank’s refund id, once the statement shows it', () => {
    expect(en(refunded, settled('re_1'))).toMatchObject({
      title: 'Refunded.',
      body: '$5.00 was refunded to the card (refund re_1).',
      message: { tone: 'ok', answeredBy: 'bank' },
    });
    expect(zh(refunded, settled('re_1'))).toMatchObject({
      title: '退款成功。',
      body: '已向银行卡退回 US$5.00（退款 re_1）。',
    });
  });

  it('a resubmit of the same refund: the same words, and that it is this refund’s first result', () => {
    const said = en(firstResult, settled('re_1'));
    expect(said?.title).toBe('Refunded.');
    expect(said?.body).toMatch(
      /^\$5\.00 was refunded to the card \(refund re_1\)\. This is this refund’s first result/,
    );
    expect(said?.message.answeredBy).toBe('requestKey');
    expect(zh(firstResult, settled('re_1'))?.body).toContain('这是这笔退款第一次的结果');
  });

  it('"refunded" waits for the statement: while it does not show the refund, the outcome says refunding', () => {
    expect(en(refunded, settled())?.title).toBe('Refunding…');
    expect(en(firstResult, settled('re_0'))?.title).toBe('Refunding…');
    expect(zh(refunded, settled())?.title).toBe('退款中…');
  });

  it('while a refund is in flight: "Refunding…", whatever the last answer was', () => {
    expect(en(refunded, { pending: true, refundIds: ['re_1'] })?.title).toBe('Refunding…');
    expect(en({ status: 'idle' }, { pending: true, refundIds: [] })?.title).toBe('Refunding…');
  });

  it('nothing is said before the first submit', () => {
    expect(en({ status: 'idle' }, settled())).toBeUndefined();
  });

  it('refused by the ledger: how much is left, in the reader’s money', () => {
    expect(en({ status: 'exceeds', leftCents: 3_200 }, settled())?.body).toBe(
      'Only $32.00 is left to refund on this order. Nothing was refunded.',
    );
    expect(zh({ status: 'exceeds', leftCents: 3_200 }, settled())?.body).toBe(
      '这个订单剩余可退的金额只有 US$32.00。没有退款。',
    );
  });

  it('the lab’s wrong answer to a duplicate says nothing of the first refund', () => {
    const said = en({ status: 'already_submitted', answeredBy: 'requestKey' }, settled('re_1'));
    expect(said).toMatchObject({ title: 'Already submitted.', message: { tone: 'warn', answeredBy: 'requestKey' } });
    expect(said?.body).not.toMatch(/refunded to the card/);
  });

  it('another amount under the same id: the amount it was asked for, when known', () => {
    expect(en({ status: 'amount_mismatch', amountCents: 700 }, settled())?.body).toMatch(
      /^This refund was asked for \$7\.00/,
    );
    expect(en({ status: 'amount_mismatch' }, settled())?.body).toMatch(
      /^This refund was asked for with another amount/,
    );
  });

  const everyAnswer: RefundState[] = [
    refunded,
    firstResult,
    { status: 'refused_by_bank', amountCents: 500, first: false, answeredBy: 'bank' },
    { status: 'refused_by_bank', amountCents: 500, first: true, answeredBy: 'requestKey' },
    { status: 'in_progress', answeredBy: 'requestKey' },
    { status: 'in_progress', answeredBy: 'stateMachine', takenOver: true },
    { status: 'exceeds', leftCents: 0 },
    { status: 'not_paid' },
    { status: 'amount_mismatch' },
    { status: 'amount_mismatch', amountCents: 700 },
    { status: 'already_submitted', answeredBy: 'requestKey' },
    { status: 'failed_retryable' },
    { status: 'connection_lost' },
    { status: 'limited' },
    { status: 'unavailable', service: 'redis' },
    { status: 'unavailable', service: 'database' },
    ...(['form', 'amount', 'sessionExpired', 'noSuchOrder', 'noSuchRefund'] as const).map(
      (reason): RefundState => ({ status: 'invalid', reason }),
    ),
  ];
  for (const locale of LOCALES) {
    it(`every answer has its words in ${locale}, and they differ from the key`, () => {
      const say = wordsIn(locale);
      for (const state of everyAnswer) {
        const said = say(state, settled('re_1'));
        expect(said?.title, state.status).toMatch(/\S/);
        expect(said?.body, state.status).not.toMatch(/^outcome\./);
      }
    });
  }
});

describe('the amount field and the statement', () => {
  it('reads dollars as typed into whole cents', () => {
    expect(['5', '5.5', '5.00', '$5.00', ' 0.01 ', '1000000'].map(centsOf)).toEqual([
      500, 550, 500, 500, 1, 100_000_000,
    ]);
  });

  it('refuses anything but a positive amount with at most 2 decimals', () => {
    for (const typed of ['', '0', '0.00', '-5', '5.001', '5,00', '1e3', 'five', '1000000.01', '.5', 'Infinity']) {
      expect(centsOf(typed), typed).toBeUndefined();
    }
  });

  it('what is left is the order less the ledger, never below zero', () => {
    expect(leftToRefund({ amountCents: 4_200, refundedCents: 1_000 })).toBe(3_200);
    expect(leftToRefund({ amountCents: 4_200, refundedCents: 5_000 })).toBe(0);
  });

  it('counts the refunds in words, in both languages', () => {
    for (const [locale, words] of [
      ['en', ['No refund yet.', 'Refunded once.', 'Refunded 2 times.']],
      ['zh-CN', ['尚未退款。', '已退款一次。', '已退款 2 次。']],
    ] as const) {
      const t = createTranslator({ locale, messages: MESSAGES[locale], namespace: 'refunds' });
      expect([0, 1, 2].map((n) => refundsInWords(n)).map(({ key, values }) => t(key, values))).toEqual(words);
    }
  });
});
