// What the checkout's outcome region says, in both languages: the words a customer reads after each answer,
// put in words as the page does (next-intl's translator over the real messages), so a missing key or a
// double charge told as a success fails here, before a browser runs.
import { createTranslator } from 'next-intl';
import { describe, expect, it } from 'vitest';
import { LOCALES, type Locale } from '@/lib/i18n/locales';
import { MESSAGES } from '@/lib/i18n/messages';
import { chargesInWords, describePayState, inWords, type MessageRef, type PageFacts, type PayState } from './pay-state';

function wordsIn(locale: Locale) {
  const t = createTranslator({
    locale,
    messages: MESSAGES[locale],
    namespace: 'checkout',
    onError: (error) => {
      throw error; // a key either language lacks, a value a message needs
    },
  });
  return (message: MessageRef) => inWords(message, t, locale);
}
const en = wordsIn('en');
const zh = wordsIn('zh-CN');

/** The outcome region's title and body, as the page shows them (without the "Answered by" chip). */
function outcome(say: (m: MessageRef) => string, state: PayState, facts: PageFacts, amount = '$42.00') {
  const message = describePayState(state, amount, facts);
  return message && { title: say(message.title), body: say(message.body), message };
}

const PAID = {
  status: 'PAID',
  orderNo: 'ord_1',
  amountCents: 4200,
  chargeId: 'ch_2',
  paidAt: '2026-01-01T00:00:00Z',
} as const;
const paid = (charges: number): PayState => ({ status: 'paid', outcome: PAID, requestId: 'req_2', charges });
const order = (status: string, ...charges: string[]): PageFacts['order'] => ({
  status,
  charges: charges.map((id) => ({ id })),
});
const settled = (o: PageFacts['order']): PageFacts => ({ pending: false, order: o });

describe('the outcome of a payment, in words', () => {
  it('a double click with every defence off: the second request was told "paid", the page says "charged twice"', () => {
    const facts = settled(order('PAID', 'ch_1', 'ch_2'));
    expect(outcome(en, paid(2), facts)).toMatchObject({
      title: 'Charged 2 times for one order!',
      body: 'Your card was charged $42.00 2 times: a duplicate got through the defences that were off. This request was told: payment successful.',
      message: { tone: 'bad', answeredBy: 'bank' },
    });
    const chinese = outcome(zh, paid(2), facts, 'US$42.00');
    expect(chinese?.title).toBe('一个订单被扣款 2 次！');
    expect(chinese?.body).toContain('被扣了 2 次 US$42.00');
    expect(chinese?.body).toContain('“支付成功”');
  });

  it('counts the charges the answer saw, when the statement has not caught up yet', () => {
    expect(outcome(en, paid(2), settled(order('PAID', 'ch_1')))?.title).toBe('Charged 2 times for one order!');
  });

  it('one charge: "Payment successful", with the charge', () => {
    expect(outcome(en, paid(1), settled(order('PAID', 'ch_2')))).toMatchObject({
      title: 'Payment successful',
      body: 'Your card was charged $42.00 (charge ch_2).',
    });
    expect(outcome(zh, paid(1), settled(order('PAID', 'ch_2')))?.title).toBe('支付成功');
  });

  it('while the payment is in flight: "Paying…", whatever the last answer was', () => {
    const facts = { pending: true, order: order('PROCESSING') };
    expect(outcome(en, { status: 'idle', token: 't' }, facts)?.title).toBe('Paying…');
    expect(outcome(zh, paid(1), facts)?.title).toBe('支付中…');
  });

  it('nothing is said before the first payment', () => {
    expect(describePayState({ status: 'idle', token: 't' }, '$42.00', settled(order('PENDING')))).toBeUndefined();
  });

  it('"in progress" turns into the order’s outcome once the order has one, naming the first charge', () => {
    const state: PayState = { status: 'in_progress', answeredBy: 'reconciler', requestId: 'req_2' };
    expect(outcome(en, state, settled(order('PROCESSING')))?.title).toBe('Payment in progress');
    expect(outcome(zh, state, settled(order('PROCESSING')))?.title).toBe('处理中');
    expect(outcome(en, state, settled(order('PAID', 'ch_1')))).toMatchObject({
      title: 'Payment successful',
      body: 'The first request’s payment went through: $42.00, charge ch_1. This one waited for it and did not charge again.',
      message: { answeredBy: 'reconciler' },
    });
  });

  it('the first request whose claim was taken over is not told it waited for "the first request" (issue 29)', () => {
    // Exercise 11a: the first window paused past its lease; the second took the claim over and charged.
    const state: PayState = { status: 'in_progress', answeredBy: 'stateMachine', takenOver: true, requestId: 'r' };
    const paidOrder = settled(order('PAID', 'ch_1'));
    for (const [messages, first] of [
      [en, /first request|waited for it/],
      [zh, /第一个请求|等待了它/],
    ] as const) {
      const told = outcome(messages, state, paidOrder);
      expect(told?.body).not.toMatch(first);
      expect(told?.body).toContain('ch_1');
    }
    expect(outcome(en, state, paidOrder)?.body).toMatch(/another request took the claim over and charged once/);
    expect(outcome(zh, state, settled(order('PROCESSING')))?.body).toMatch(/另一个请求接管了标记/);
  });

  it('"paid" waits for the statement: while it still shows no charge, the outcome says paying (issue 29)', () => {
    // The answer comes first; the statement reads the order a moment later. For up to a second the page said
    // "Payment successful" beside "No charge yet".
    expect(outcome(en, paid(1), settled(order('PENDING')))?.title).toBe('Paying…');
    expect(outcome(en, paid(1), settled(order('PROCESSING')))?.title).toBe('Paying…');
    const replayed: PayState = { status: 'replayed', outcome: PAID, answeredBy: 'requestKey', requestId: 'r' };
    expect(outcome(en, replayed, settled(order('PENDING')))?.title).toBe('Paying…');
    expect(outcome(en, paid(1), settled(order('PAID', 'ch_2')))?.title).toBe('Payment successful');
    expect(outcome(zh, paid(1), settled(order('PENDING')))?.title).toBe('支付中…');
    expect(outcome(zh, paid(1), settled(order('PAID', 'ch_2')))?.title).toBe('支付成功');
  });

  it('a refused token: a stale page is told to reload, a second click that it was already submitted', () => {
    const refused = (resubmit: boolean): PayState => ({ status: 'already_submitted', resubmit, requestId: 'r' });
    const stale = outcome(en, refused(false), settled(order('PENDING')));
    expect(stale?.body).toMatch(/^This page expired: reload to pay\./);
    expect(stale?.message).toMatchObject({ reload: true, answeredBy: 'token' });
    expect(outcome(en, refused(true), settled(order('PAID', 'ch_1')))?.body).toContain('the order is paid ($42.00)');
    expect(outcome(zh, refused(true), settled(order('PAID', 'ch_1')))?.title).toBe('请勿重复提交');
  });

  it('a first submit whose token was spent by its own earlier delivery (a gateway’s retry) is never told to reload beside a charge', () => {
    // Issue 29: nginx re-sent the form post to the other instance, whose layer 1 refused the spent token, and
    // the page said "nothing was sent to the bank. Reload to pay" while the statement showed the charge.
    const refused: PayState = { status: 'already_submitted', resubmit: false, requestId: 'r' };
    const paidMeanwhile = outcome(en, refused, settled(order('PAID', 'ch_1')));
    expect(paidMeanwhile?.body).toContain('the order is paid ($42.00)');
    expect(paidMeanwhile?.message).not.toMatchObject({ reload: true });
    expect(outcome(en, refused, settled(order('PROCESSING')))?.body).toMatch(/order status shows its progress/);
    expect(outcome(en, refused, settled(order('PENDING')))?.body).toMatch(/^This page expired/);
  });

  it('a decline reason the bank gives is said in the reader’s language; an unknown one as the bank sent it', () => {
    const declined = (reason: string): PayState => ({
      status: 'failed_final',
      outcome: { status: 'DECLINED', orderNo: 'ord_1', amountCents: 4200, reason },
      requestId: 'r',
    });
    expect(outcome(en, declined('insufficient funds'), settled(order('DECLINED')))?.body).toBe(
      'Your bank declined the payment (insufficient funds). Nothing was charged.',
    );
    expect(outcome(zh, declined('insufficient funds'), settled(order('DECLINED')))?.body).toContain('（余额不足）');
    expect(outcome(zh, declined('card stolen'), settled(order('DECLINED')))?.body).toContain('（card stolen）');
  });

  it('a bank that could not be reached: nothing charged, try again', () => {
    const state: PayState = { status: 'failed_retryable', requestId: 'r', token: 't2' };
    expect(outcome(en, state, settled(order('PENDING')))?.body).toBe(
      'The bank could not be reached. Nothing was charged. You can try again.',
    );
  });

  const everyAnswer: PayState[] = [
    paid(1),
    { status: 'replayed', outcome: PAID, answeredBy: 'requestKey', requestId: 'r' },
    {
      status: 'replayed',
      outcome: { status: 'DECLINED', orderNo: 'ord_1', amountCents: 4200, reason: 'declined' },
      answeredBy: 'stateMachine',
      requestId: 'r',
    },
    { status: 'mismatch', requestId: 'r' },
    { status: 'no_answer' },
    { status: 'limited' },
    { status: 'unavailable', service: 'redis' },
    { status: 'unavailable', service: 'database' },
    { status: 'invalid', reason: 'form' },
    { status: 'invalid', reason: 'sessionExpired' },
    { status: 'invalid', reason: 'noSuchOrder' },
  ];
  for (const locale of LOCALES) {
    it(`every answer has its words in ${locale}, and they differ from the key`, () => {
      const say = wordsIn(locale);
      for (const state of everyAnswer) {
        const said = outcome(say, state, settled(order('PAID', 'ch_1')));
        expect(said?.title, state.status).toMatch(/\S/);
        expect(said?.body, state.status).not.toMatch(/^outcome\./);
      }
    });
  }
});

describe('the card statement, in words', () => {
  it('says how many times the card was charged, in both languages', () => {
    expect([0, 1, 2].map((n) => en(chargesInWords(n)))).toEqual([
      'No charge yet.',
      'Charged once.',
      'Charged 2 times for one order!',
    ]);
    expect([0, 1, 3].map((n) => zh(chargesInWords(n)))).toEqual([
      '尚未扣款。',
      '已扣款一次。',
      '一个订单被扣款 3 次！',
    ]);
  });
});
