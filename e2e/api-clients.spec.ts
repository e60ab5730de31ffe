// Real retrying HTTP clients against POST /api/payments: what the first request and its retries get when
// the bank's answer is in doubt (docs/decisions/014-answers-in-doubt.md). `got` is configured as its docs
// say for a POST that carries an Idempotency-Key: POST retried, 409 added to the retried statuses, a 1 s
// timeout. Its Retry-After rule is the one that matters: longer than its timeout, it gives up.
import got, { HTTPError } from 'got';
import { ALL_ON, chargeCount, createOrder, expect, test } from './fixtures';

function gotClient(baseURL: string, attempts: string[]) {
  return got.extend({
    prefixUrl: baseURL,
    timeout: { request: 1_000 },
    retry: {
      limit: 5,
      methods: ['POST'],
      statusCodes: [408, 409, 413, 429, 500, 502, 503, 504, 521, 522, 524],
    },
    hooks: {
      afterResponse: [
        (response) => {
          attempts.push(
            `${response.statusCode}${response.headers['retry-after'] ? ` retry-after ${response.headers['retry-after']}` : ''}`,
          );
          return response;
        },
      ],
    },
  });
}

for (const [name, faults, first] of [
  ['the bank times out after charging', { bankTimeoutAfterCharge: true }, '201'],
  ['the charge lands 1.5 s after the bank call timed out', { bankLateChargeMs: 1_500 }, '409 retry-after 1'],
] as const) {
  // The workshop's exercise 8 runs both: `npm run test:e2e -- -g "@got-retries"`.
  test(`got ends with the payment's outcome when ${name}`, { tag: '@got-retries' }, async ({ request, baseURL }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON, faults });
    const attempts: string[] = [];
    const response = await gotClient(`${baseURL}/api`, attempts)
      .post('payments', {
        json: { orderNo, amountCents: 4200 },
        headers: { 'idempotency-key': `got-${orderNo}`, 'x-client-id': 'got' },
      })
      .catch((error: unknown) => (error instanceof HTTPError ? error.response : Promise.reject(error)));
    expect(response.statusCode, attempts.join(', ')).toBe(201);
    expect(attempts[0]).toBe(first);
    expect(JSON.parse(String(response.body))).toMatchObject({ status: 'PAID', orderNo });
    expect(await chargeCount(orderNo)).toBe(1);
  });
}
