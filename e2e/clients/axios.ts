// The axios recipe, with axios-retry. Its default condition never retries a timeout (ECONNABORTED), nor a
// POST's 409 or 5xx, and without `shouldResetTimeout` every retry only gets what is left of the first
// attempt's timeout: nothing, after a timeout (node_modules/axios-retry/dist/esm/index.js).
import axios, { isAxiosError } from 'axios';
import axiosRetry, { isNetworkError } from 'axios-retry';

export async function pay(
  baseUrl: string,
  payment: { orderNo: string; amountCents: number },
  options: { idempotencyKey: string; clientId: string; timeoutMs: number },
): Promise<{ status: number; headers: Record<string, string>; body: unknown; attempts: number }> {
  let attempts = 0;
  const client = axios.create();
  client.interceptors.request.use((config) => {
    attempts += 1; // every retry goes through the instance's interceptors again
    return config;
  });
  // recipe:start
  axiosRetry(client, {
    retries: 5,
    // Per attempt: each retry gets the whole timeout again.
    shouldResetTimeout: true,
    // POST is safe to repeat here: the Idempotency-Key makes every attempt the same payment. A timeout is
    // ECONNABORTED (ETIMEDOUT with transitional.clarifyTimeoutError); 409: the first attempt is still running.
    retryCondition: (error) =>
      isNetworkError(error) ||
      error.code === 'ECONNABORTED' ||
      error.code === 'ETIMEDOUT' ||
      [409, 429, 500, 502, 503, 504].includes(error.response?.status ?? 0),
    // Backoff, but never sooner than Retry-After.
    retryDelay: axiosRetry.exponentialDelay,
  });
  const response = await client
    .post(`${baseUrl}/api/payments`, payment, {
      timeout: options.timeoutMs,
      headers: { 'idempotency-key': options.idempotencyKey, 'x-client-id': options.clientId },
    })
    // After the retries, the last answer (404, or a 409) is in the error.
    .catch((error: unknown) => (isAxiosError(error) && error.response ? error.response : Promise.reject(error)));
  // recipe:end
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined && value !== null) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return { status: response.status, headers, body: response.data, attempts };
}
