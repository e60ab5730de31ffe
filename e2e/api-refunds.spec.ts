// POST /api/refunds from outside, on a $42.00 paid order (issue 27's acceptance): one refund per request id,
// whatever the concurrency; two ids, two refunds; refunds past the charge refused with what is left; the ledger
// (charged − refunded) never below zero; an unpaid order refused.
import type { APIRequestContext } from '@playwright/test';
import { ALL_ON, createOrder, expect, test } from './fixtures';

const CALLER = { 'x-client-id': 'refunds-spec' };

async function paidOrder(request: APIRequestContext, faults = {}): Promise<string> {
  const orderNo = await createOrder(request, { layers: ALL_ON, faults });
  const paid = await request.post('/api/payments', {
    headers: { ...CALLER, 'idempotency-key': `pay-${orderNo}` },
    data: { orderNo, amountCents: 4200 },
  });
  expect(paid.status()).toBe(201);
  return orderNo;
}

const refund = (request: APIRequestContext, orderNo: string, amountCents: number, id: string) =>
  request.post('/api/refunds', {
    headers: { ...CALLER, 'idempotency-key': `"${id}"` },
    data: { orderNo, amountCents },
  });

/** The card statement of the order: its refunds, and the merchant's ledger. */
async function statement(request: APIRequestContext, orderNo: string) {
  const view = await (await request.get(`/api/orders/${orderNo}`, { headers: CALLER })).json();
  return view as { amountCents: number; refunds: Array<{ amountCents: number }>; refundedCents: number };
}

test.describe('POST /api/refunds', () => {
  test('20 concurrent refunds of $5 with one request id: one refund; every answer its 201 or 409', async ({
    request,
  }) => {
    const orderNo = await paidOrder(request, { bankLatencyMs: 300 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => refund(request, orderNo, 500, `one-${orderNo}`)),
    );
    const statuses = answers.map((answer) => answer.status());
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const bodies = new Set(await Promise.all(answers.filter((a) => a.status() === 201).map((a) => a.text())));
    expect(bodies.size).toBe(1);
    const { refunds, refundedCents } = await statement(request, orderNo);
    expect(refunds.map((r) => r.amountCents)).toEqual([500]);
    expect(refundedCents).toBe(500);
    // A retry afterwards: the same status and bytes, replayed.
    const again = await refund(request, orderNo, 500, `one-${orderNo}`);
    expect(again.status()).toBe(201);
    expect(again.headers()['idempotent-replayed']).toBe('true');
    expect(await again.text()).toBe([...bodies][0]);
  });

  test('two refunds of $5 with two request ids: two refunds', async ({ request }) => {
    const orderNo = await paidOrder(request);
    expect((await refund(request, orderNo, 500, `a-${orderNo}`)).status()).toBe(201);
    expect((await refund(request, orderNo, 500, `b-${orderNo}`)).status()).toBe(201);
    const { refunds, refundedCents } = await statement(request, orderNo);
    expect(refunds.map((r) => r.amountCents)).toEqual([500, 500]);
    expect(refundedCents).toBe(1_000);
  });

  test('20 concurrent refunds of $30 with 20 ids: exactly one, the others told how much is left; the ledger never below zero', async ({
    request,
  }) => {
    const orderNo = await paidOrder(request, { bankLatencyMs: 200 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => refund(request, orderNo, 3_000, `big-${i}-${orderNo}`)),
    );
    expect(answers.filter((answer) => answer.status() === 201)).toHaveLength(1);
    const refused = answers.filter((answer) => answer.status() === 422);
    expect(refused).toHaveLength(19);
    for (const answer of refused) {
      const problem = await answer.json();
      expect(problem).toMatchObject({ type: '/problems/refund-exceeds-charge', leftCents: 1_200 });
      expect(problem.detail).toContain('1200');
    }
    const { amountCents, refunds, refundedCents } = await statement(request, orderNo);
    const refunded = refunds.reduce((sum, r) => sum + r.amountCents, 0);
    expect(refunded).toBe(3_000);
    expect(amountCents - refunded).toBeGreaterThanOrEqual(0);
    expect(refundedCents).toBe(refunded);
  });

  test('a refund of an unpaid order is refused, and the same key with another amount is a 422', async ({ request }) => {
    const unpaid = await createOrder(request, { layers: ALL_ON });
    const refused = await refund(request, unpaid, 500, `unpaid-${unpaid}`);
    expect(refused.status()).toBe(422);
    expect(await refused.json()).toMatchObject({ type: '/problems/order-not-paid', orderStatus: 'PENDING' });
    const orderNo = await paidOrder(request);
    expect((await refund(request, orderNo, 500, `k-${orderNo}`)).status()).toBe(201);
    const other = await refund(request, orderNo, 700, `k-${orderNo}`);
    expect(other.status()).toBe(422);
    expect((await other.json()).type).toBe('/problems/idempotency-key-reused');
    expect((await statement(request, orderNo)).refunds).toHaveLength(1);
  });
});
