// The recipe with no library: Node's global fetch, a loop, and AbortSignal.timeout. fetch never retries
// anything, so everything a retrying client must do is written out here.
import { setTimeout as sleep } from 'node:timers/promises';

export async function pay(
  baseUrl: string,
  payment: { orderNo: string; amountCents: number },
  options: { idempotencyKey: string; clientId: string; timeoutMs: number },
): Promise<{ status: number; headers: Record<string, string>; body: unknown; attempts: number }> {
  // recipe:start
  const retryable = [409, 429, 500, 502, 503, 504]; // 409: the first attempt is still running
  const maxAttempts = 6;
  let attempts = 0;
  let response: Response | undefined;
  for (;;) {
    attempts += 1;
    try {
      response = await fetch(`${baseUrl}/api/payments`, {
        method: 'POST',
        // The same key on every attempt: it is what makes a repeated POST the same payment.
        headers: {
          'content-type': 'application/json',
          'idempotency-key': options.idempotencyKey,
          'x-client-id': options.clientId,
        },
        body: JSON.stringify(payment),
        // Per attempt: a new signal each time round the loop.
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      // A timeout (TimeoutError) or a connection error (TypeError): the charge may have happened; retry.
      const transient = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'TypeError');
      if (!transient || attempts >= maxAttempts) throw error;
      await sleep(250 * 2 ** (attempts - 1));
      continue;
    }
    // 2xx, and 400/402/404/422: final, never retried.
    if (!retryable.includes(response.status) || attempts >= maxAttempts) break;
    // Retry-After in seconds (this API always sends 1), else backoff.
    const retryAfter = Number(response.headers.get('retry-after'));
    await response.body?.cancel();
    await sleep(retryAfter > 0 ? retryAfter * 1000 : 250 * 2 ** (attempts - 1));
  }
  // recipe:end
  const text = await response.text();
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: text ? JSON.parse(text) : undefined,
    attempts,
  };
}
