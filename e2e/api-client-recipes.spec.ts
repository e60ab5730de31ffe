// The retrying-client recipes of docs/clients.md, each against the running app: a bank that answers 4 s
// after charging and a client that gives up on an attempt after 2.5 s (SLOW_BANK), so the first attempt is
// charged and times out. The recipe must retry with the same key, wait through the 409s, and end with that charge. And a
// retry that prefers to wait (Prefer: wait=N) needs no 409 handling at all: got with its defaults ends with it.
import { Agent } from 'node:http';
import got from 'got';
import { pay as axiosPay } from './clients/axios';
import { pay as fetchPay } from './clients/fetch';
import { pay as gotPay } from './clients/got';
import { pay as kyPay } from './clients/ky';
import { pay as undiciPay } from './clients/undici';
import { ALL_ON, chargeCount, createOrder, expect, SLOW_BANK, test } from './fixtures';

const recipes = { undici: undiciPay, got: gotPay, ky: kyPay, axios: axiosPay, fetch: fetchPay };

for (const [name, pay] of Object.entries(recipes)) {
  test.describe(`the ${name} recipe`, () => {
    test('retries a timed-out payment with its key: one charge, and the outcome of the first attempt', async ({
      request,
      baseURL,
    }) => {
      const orderNo = await createOrder(request, {
        layers: ALL_ON,
        faults: { bankLatencyMs: SLOW_BANK.bankLatencyMs },
      });
      const result = await pay(
        baseURL ?? '',
        { orderNo, amountCents: 4_200 },
        {
          idempotencyKey: `recipe-${name}-${orderNo}`,
          clientId: `recipe-${name}`,
          timeoutMs: SLOW_BANK.clientTimeoutMs,
        },
      );
      expect(result.status, JSON.stringify(result.body)).toBe(201);
      expect(result.attempts).toBeGreaterThan(1);
      // The first attempt's charge, answered to a retry: its outcome replayed, not a new payment.
      expect(result.headers['idempotent-replayed']).toBe('true');
      const order = (await (await request.get(`/api/orders/${orderNo}`)).json()) as { charges: Array<{ id: string }> };
      expect(order.charges).toHaveLength(1);
      expect(result.body).toMatchObject({
        status: 'PAID',
        orderNo,
        amountCents: 4_200,
        chargeId: order.charges[0]?.id,
      });
      expect(await chargeCount(orderNo)).toBe(1);
    });

    test('never retries a final 4xx: an unknown order is 404 after one attempt', async ({ baseURL }) => {
      const result = await pay(
        baseURL ?? '',
        { orderNo: 'ord_0000000000000000', amountCents: 4_200 },
        {
          idempotencyKey: `recipe-${name}-unknown-${Date.now()}`,
          clientId: `recipe-${name}`,
          timeoutMs: SLOW_BANK.clientTimeoutMs,
        },
      );
      expect(result.status).toBe(404);
      expect(result.attempts).toBe(1);
    });
  });
}

test.describe('Prefer: wait', () => {
  test('a retry by got with its default retry settings ends with the first charge when it prefers to wait, with a 409 when not', async ({
    request,
    baseURL,
  }) => {
    for (const prefer of [undefined, 'wait=10'] as const) {
      // 6 s at the bank: the retry must land while the first attempt runs, even when a busy machine is slow to
      // send it (with 2.5 s, the first was sometimes done first, and its replay is not a wait).
      const orderNo = await createOrder(request, { layers: ALL_ON, faults: { bankLatencyMs: 6_000 } });
      const headers = { 'idempotency-key': `defaults-${orderNo}`, 'x-client-id': `defaults-${orderNo}` };
      const payment = { orderNo, amountCents: 4_200 };
      // The first attempt's answer is lost half a second in: the caller cannot know whether it paid.
      await request.post('/api/payments', { headers, data: payment, timeout: 500 }).catch(() => undefined);
      await expect
        .poll(async () => (await (await request.get(`/api/orders/${orderNo}`)).json()).status, { intervals: [50] })
        .toBe('PROCESSING');
      // Its retry, sent by got as it comes (its defaults retry no POST and no 409), with a timeout above the wait.
      // On a connection of its own: Node 20's shared agent (keep-alive, a 5 s timeout) sometimes closed a reused
      // connection 5 s into the wait, under load ("socket hang up"; docs/clients.md says so).
      const retry = await got.post(`${baseURL}/api/payments`, {
        json: payment,
        headers: { ...headers, ...(prefer ? { prefer } : {}) },
        agent: { http: new Agent({ keepAlive: false }) },
        timeout: { request: 15_000 },
        throwHttpErrors: false,
      });
      const order = (await (await request.get(`/api/orders/${orderNo}`)).json()) as { charges: Array<{ id: string }> };
      if (prefer) {
        expect(retry.statusCode).toBe(201);
        expect(retry.headers['preference-applied']).toBe('wait=10');
        expect(JSON.parse(retry.body)).toMatchObject({ status: 'PAID', chargeId: order.charges[0]?.id });
      } else {
        expect(retry.statusCode).toBe(409);
      }
      expect(await chargeCount(orderNo)).toBe(1);
    }
  });
});
