// The got recipe. By default got retries neither POST nor 409, and it gives up on a Retry-After longer than
// `retry.maxRetryAfter`, which defaults to `timeout.request` (node_modules/got/dist/source/core/options.js
// and calculate-retry-delay.js).
import got from 'got';

export async function pay(
  baseUrl: string,
  payment: { orderNo: string; amountCents: number },
  options: { idempotencyKey: string; clientId: string; timeoutMs: number },
): Promise<{ status: number; headers: Record<string, string>; body: unknown; attempts: number }> {
  let attempts = 0;
  // Counts attempts: beforeRequest runs once per attempt.
  const client = got.extend({
    hooks: {
      beforeRequest: [
        () => {
          attempts += 1;
        },
      ],
    },
  });
  // recipe:start
  const response = await client.post(`${baseUrl}/api/payments`, {
    json: payment,
    headers: { 'idempotency-key': options.idempotencyKey, 'x-client-id': options.clientId },
    // Per attempt: every retry is a new request with its own timer.
    timeout: { request: options.timeoutMs },
    retry: {
      limit: 5,
      // POST is safe to repeat here: the Idempotency-Key makes every attempt the same payment.
      methods: ['POST'],
      // 409: the first attempt is still running. Timeouts (ETIMEDOUT) are in got's default errorCodes.
      statusCodes: [409, 429, 500, 502, 503, 504],
      // A longer Retry-After makes got give up, not wait; unset, this limit is timeout.request.
      maxRetryAfter: 10_000,
    },
    // The last answer (404, or a 409 after every retry) is returned, not thrown; retries still happen.
    throwHttpErrors: false,
  });
  // recipe:end
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    status: response.statusCode,
    headers,
    body: response.body ? JSON.parse(response.body) : undefined,
    attempts,
  };
}
