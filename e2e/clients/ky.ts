// The ky recipe. ky 1.9.1 never retries its own timeout (a TimeoutError ends `_retry`), aborts the one
// signal every attempt shares when it fires, retries neither POST nor 409, and honours Retry-After only
// on 413/429/503 (node_modules/ky/distribution/core/Ky.js and utils/normalize.js). So the per-attempt
// timeout is the fetch's own, and the rest is named here.
import ky, { HTTPError } from 'ky';

export async function pay(
  baseUrl: string,
  payment: { orderNo: string; amountCents: number },
  options: { idempotencyKey: string; clientId: string; timeoutMs: number },
): Promise<{ status: number; headers: Record<string, string>; body: unknown; attempts: number }> {
  let attempts = 0;
  // Counts attempts: beforeRequest runs once per attempt.
  const client = ky.create({
    hooks: {
      beforeRequest: [
        () => {
          attempts += 1;
        },
      ],
    },
  });
  // recipe:start
  const response = await client
    .post(`${baseUrl}/api/payments`, {
      json: payment,
      headers: { 'idempotency-key': options.idempotencyKey, 'x-client-id': options.clientId },
      // ky's own timeout is never retried: a fresh signal per attempt instead, whose abort (a DOMException,
      // not ky's TimeoutError) ky retries like any network error.
      timeout: false,
      fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(options.timeoutMs) }),
      retry: {
        limit: 5,
        // POST is safe to repeat here: the Idempotency-Key makes every attempt the same payment.
        methods: ['post'],
        // 409: the first attempt is still running; honour its Retry-After (ky does only for afterStatusCodes).
        statusCodes: [409, 429, 500, 502, 503, 504],
        afterStatusCodes: [409, 429, 503],
      },
      // throwHttpErrors must stay true: ky retries a status only when it throws. The last answer is in the error.
    })
    .catch((error: unknown) => (error instanceof HTTPError ? error.response : Promise.reject(error)));
  // recipe:end
  const text = await response.text();
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: text ? JSON.parse(text) : undefined,
    attempts,
  };
}
