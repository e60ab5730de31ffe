// POST /api/refunds's mapping from a refund pipeline's result to HTTP, for an order that is not paid: final when the
// bank has nothing either, "in progress" while its payment runs or waits for the bank.
import { describe, expect, it } from 'vitest';
import { refundResponse } from './refund-response.ts';

async function answer(...args: Parameters<typeof refundResponse>) {
  const response = refundResponse(...args);
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.json() };
}

describe('refundResponse', () => {
  it('an order that is not paid (and the bank has no charge of it): 422 order-not-paid, final', async () => {
    const refused = await answer({ laneId: 'r1', kind: 'not_paid', status: 'PENDING' });
    expect(refused).toMatchObject({ status: 422, body: { orderStatus: 'PENDING' } });
    expect(refused.body.type).toMatch(/\/order-not-paid$/);
    expect(refused.headers['retry-after']).toBeUndefined();
  });

  it('an order whose payment still runs or waits for the bank: 409 payment-in-progress, retry after Retry-After', async () => {
    const unsettled = await answer({ laneId: 'r1', kind: 'payment_in_progress', status: 'PROCESSING' });
    expect(unsettled).toMatchObject({
      status: 409,
      headers: { 'retry-after': '1', 'x-request-id': 'r1' },
      body: { title: 'Payment in progress', orderStatus: 'PROCESSING' },
    });
    expect(unsettled.body.type).toMatch(/\/payment-in-progress$/);
    expect(unsettled.body.detail).toContain('PROCESSING');
  });
});
