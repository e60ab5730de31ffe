// POST /api/payments's mapping from a pipeline result to HTTP: statuses, headers, and replays that are
// byte-identical to the first answer.
import { describe, expect, it } from 'vitest';
import { type PaymentOutcome, PaymentOutcomeSchema } from '../defences/outcome.ts';
import type { PayResult } from '../payments/pay.ts';
import { canonicalOutcome, paymentResponse } from './payment-response.ts';

const paid: PaymentOutcome = {
  status: 'PAID',
  orderNo: 'ord_0123456789abcdef',
  amountCents: 4200,
  chargeId: 'ch_1',
  paidAt: '2026-11-30T08:00:00.000Z',
};
const declined: PaymentOutcome = { status: 'DECLINED', orderNo: paid.orderNo, amountCents: 4200, reason: 'no funds' };
const requestId = 'r1';

async function answer(result: PayResult) {
  const response = paymentResponse(result);
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

describe('paymentResponse', () => {
  it('the first payment is 201; its replay is 201 with the same bytes and Idempotent-Replayed', async () => {
    const first = await answer({ requestId, kind: 'completed', outcome: paid });
    const replay = await answer({
      requestId,
      kind: 'duplicate',
      outcome: paid,
      answeredBy: 'requestKey',
      existing: false,
    });
    expect(first).toMatchObject({ status: 201, headers: { 'x-answered-by': 'bank', 'x-request-id': 'r1' } });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(replay).toMatchObject({
      status: 201,
      headers: { 'idempotent-replayed': 'true', 'x-answered-by': 'requestKey' },
    });
    expect(replay.body).toBe(first.body);
  });

  it('another intent’s payment is 200 the first time and 200 on its replay', async () => {
    const first = await answer({
      requestId,
      kind: 'duplicate',
      outcome: paid,
      answeredBy: 'stateMachine',
      existing: true,
    });
    const replay = await answer({
      requestId,
      kind: 'duplicate',
      outcome: paid,
      answeredBy: 'requestKey',
      existing: true,
    });
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
  });

  it('a body is the same bytes whatever order the outcome’s fields were read in', async () => {
    const shuffled = {
      paidAt: paid.paidAt,
      chargeId: 'ch_1',
      amountCents: 4200,
      orderNo: paid.orderNo,
      status: 'PAID',
    };
    const first = await answer({ requestId, kind: 'completed', outcome: paid });
    const replay = await answer({
      requestId,
      kind: 'duplicate',
      outcome: shuffled as PaymentOutcome,
      answeredBy: 'requestKey',
      existing: false,
    });
    expect(replay.body).toBe(first.body);
  });

  it('a paid outcome is written with the schema’s fields, in the schema’s order, and nothing else', () => {
    const read = { ...paid, extra: 'not ours' } as PaymentOutcome & { status: 'PAID' };
    const written = canonicalOutcome(read);
    expect(Object.keys(written)).toEqual(Object.keys(PaymentOutcomeSchema.options[0].shape));
    expect(written).toEqual(PaymentOutcomeSchema.parse(read));
  });

  it('a decline is a 402 problem whose status is the HTTP status, replayed alike', async () => {
    const first = await answer({ requestId, kind: 'completed', outcome: declined });
    const replay = await answer({
      requestId,
      kind: 'duplicate',
      outcome: declined,
      answeredBy: 'requestKey',
      existing: false,
    });
    expect([first.status, replay.status]).toEqual([402, 402]);
    expect(JSON.parse(first.body)).toMatchObject({ status: 402, paymentStatus: 'DECLINED', reason: 'no funds' });
    expect(replay.body).toBe(first.body);
  });

  it('in progress is 409 with Retry-After and the layer that answered', async () => {
    const response = await answer({ requestId, kind: 'in_progress', answeredBy: 'bank' });
    expect(response).toMatchObject({ status: 409, headers: { 'retry-after': '1', 'x-answered-by': 'bank' } });
  });
});
