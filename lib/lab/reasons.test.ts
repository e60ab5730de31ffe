// The timeline's reasons: the English detail reads exactly as the steps wrote it before reasons were messages
// (the API, the logs and the tests read it), and every reason renders in every language with no English left
// outside code. (That both languages have every reason, with the same arguments, is lib/i18n/messages.test.ts.)
import { createTranslator } from 'use-intl/core';
import { describe, expect, it } from 'vitest';
import { ALLOWED } from '../../e2e/i18n.ts';
import { LOCALES } from '../i18n/locales.ts';
import { MESSAGES } from '../i18n/messages.ts';
import { englishDetail, type ReasonKey, reason } from './reasons.ts';

describe('a reason in English', () => {
  const cases: Array<[ReturnType<typeof reason>, string]> = [
    [
      reason('received', { channel: 'api', cents: 4200, defences: '0 1 2' }),
      'api request for 4200 cents; defences on: 0 1 2',
    ],
    [
      reason('received', { channel: 'browser', cents: 4200, defences: 'none' }),
      'browser request for 4200 cents; defences on: none',
    ],
    [
      reason('keyClaimed', { key: 'ord_1', strategy: 'business', fence: 3, leaseMs: 30000 }),
      'key ord_1: fence 3 (a reading of Redis’s clock: every later claim’s is larger), lease 30000 ms',
    ],
    [
      reason('keyStillProcessing', { key: 'a1b2', strategy: 'paramHash' }),
      'key a1b2 (paramHash): the first request is still processing',
    ],
    [
      reason('keyTakeover', { key: 'k', strategy: 'business', why: 'lease', oldFence: 1, fence: 2 }),
      "key k: the first request's claim ran past its lease (fence 1); now fence 2",
    ],
    [
      reason('keyMismatch', { key: 'k', strategy: 'business', usedOn: 'none' }),
      'key k: this key was used with a different payload',
    ],
    [
      reason('keyMismatch', { key: 'k', strategy: 'business', usedOn: 'POST /api/orders' }),
      'key k: this key was used on POST /api/orders',
    ],
    [reason('dbSettled', { layer: 'stateMachine', found: 'no', status: 'PAID' }), '0 rows: already PAID'],
    [
      reason('dbSettled', { layer: 'uniqueConstraint', found: 'yes', status: 'PAID' }),
      'unique violation (P2002): the first attempt’s claim was dead; the bank has its charge',
    ],
    [reason('bankCharged', { charge: 'ch_1', fence: 'none' }), 'charge ch_1'],
    [reason('bankCharged', { charge: 'ch_1', fence: 4 }), 'charge ch_1 (fence 4)'],
    [reason('bankTimeout', { ms: 10000 }), 'the bank did not answer within 10000 ms; the outcome is unknown'],
    [
      reason('outcomeDuplicate', { status: 'PAID', answeredBy: 'stateMachine' }),
      'duplicate: answered with the first outcome (PAID) by layer 3, state machine',
    ],
    [reason('outcomeCompleted', { status: 'DECLINED' }), 'this request was declined'],
    [
      reason('reconcileTakeover', { holder: 'none', oldFence: 1, fence: 2 }),
      'an unknown outcome nobody held (fence 1); now fence 2',
    ],
    [
      reason('reconcileReleased', { why: 'windowPassed' }),
      'the bank has no charge, and its settlement window has passed: nothing moved; the order may be paid again',
    ],
    [
      reason('receiptDelivery', { delivery: 'again', message: '17-0', charge: 'ch_1', result: 'duplicate' }),
      'redelivered message 17-0 (charge ch_1): receipt already sent (RECEIPT unique key)',
    ],
    [
      reason('receiptDelivery', { delivery: 'first', message: '17-0', charge: 'none', result: 'sent' }),
      'delivered message 17-0: sent',
    ],
  ];
  it.each(cases)('%j reads as before', (given, detail) => {
    expect(englishDetail(given)).toBe(detail);
  });
});

/** Values for every argument of every reason, each select's words included where they matter. */
const SAMPLE = {
  channel: 'browser',
  cents: '4200',
  defences: '0 1 2',
  token: 'checkout:token:ord_0000000000000000',
  key: 'projector-ord_1',
  strategy: 'perSubmit',
  fence: '3',
  leaseMs: '30000',
  status: 'PAID',
  why: 'unknown',
  oldFence: '2',
  usedOn: 'POST /api/orders',
  charge: 'ch_1',
  stallMs: '2500',
  point: 'afterCharge',
  alone: 'yes',
  orderNo: 'ord_0000000000000000',
  layer: 'uniqueConstraint',
  found: 'yes',
  reason: 'card stolen',
  ms: '10000',
  message: 'socket hang up',
  until: '12:00:00',
  holder: 'dead',
  delivery: 'again',
  result: 'timeout',
  method: 'POST',
  uri: '/api/payments',
  attempt: '1',
  instance: 'app-a',
  timeoutMs: '2000',
  last: 'no',
  callerGets: '504',
  answeredBy: 'requestKey',
  now: '127.0.0.1:26471',
  reference: 'ord_0000000000000000/rq_1',
  left: '1200',
  refund: 're_1',
  before: '127.0.0.1:26470',
};

describe('every reason, in every language', () => {
  for (const locale of LOCALES) {
    it(`renders in ${locale}${locale === 'en' ? '' : ', with no English outside code'}`, () => {
      const errors: string[] = [];
      const t = createTranslator({
        locale,
        messages: MESSAGES[locale],
        namespace: 'timeline.reasons',
        onError: (error) => errors.push(error.message),
      });
      for (const key of Object.keys(MESSAGES.en.timeline.reasons) as ReasonKey[]) {
        const text = t.markup(key, { ...SAMPLE, code: (chunks) => `<code>${chunks}</code>` });
        expect(text, key).not.toMatch(/[{}]/);
        if (locale === 'en') continue;
        const words = [...text.replace(/<code>.*?<\/code>/g, '').matchAll(/[A-Za-z][A-Za-z_]*/g)]
          .map(([word]) => word)
          .filter((word) => word.length > 1 && !ALLOWED.has(word) && !/^(ord|ch)_/.test(word));
        expect(words, `${key}: ${text}`).toEqual([]);
      }
      expect(errors).toEqual([]);
    });
  }
});
