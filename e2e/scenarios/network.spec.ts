// Source 2: the client's network. A response lost on its way back (the customer retries by hand), and
// an HTTP client that times out and retries by itself with the same Idempotency-Key.
import type { APIRequestContext } from '@playwright/test';
import { expect } from '../fixtures';
import { categorizeResponse, keyStrategyScenario, openCheckout, scenario, seesOn } from './cell';
import type { Sees } from './matrix';

scenario('lost-response', async ({ page, orderNo }) => {
  const pay = await openCheckout(page, orderNo);
  // Let the server action run to the end, then drop its response before it reaches the browser.
  await page.route(`**/checkout/${orderNo}`, async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    await route.fetch();
    await route.abort('connectionreset');
  });
  await pay.click();
  // The response is dropped once the server has sent it all: after the bank, as slow as this machine is now. The
  // page says it heard nothing back (the card may have been charged), and the customer reloads.
  await expect(page.getByRole('status')).toHaveAttribute('data-answer', 'connection_lost', { timeout: 20_000 });
  await page.unroute(`**/checkout/${orderNo}`);
  await page.reload();
  await page.getByRole('button', { name: /Pay/ }).click();
  return seesOn(page);
});

scenario('client-retry', async ({ request, orderNo }) => {
  // Like many SDKs, the client stamps every attempt with the time it was sent (requestedAt). The
  // Idempotency-Key stays the same; the parameters do not.
  return retryUntilAnswered(request, orderNo, () => ({ orderNo, amountCents: 4200, requestedAt: Date.now() }));
});

keyStrategyScenario('client-resend', async ({ request, orderNo }) => {
  // A transport-level retry: the very bytes of the first attempt again, its timestamp included.
  const body = { orderNo, amountCents: 4200, requestedAt: Date.now() };
  return retryUntilAnswered(request, orderNo, () => body);
});

/**
 * Attempt 1 gives up after 500 ms (the bank takes 1.2 s); the server goes on and charges. Then the client
 * retries with the same key, waiting as told by Retry-After, like a well-behaved client.
 */
async function retryUntilAnswered(
  request: APIRequestContext,
  orderNo: string,
  body: () => Record<string, unknown>,
): Promise<Sees> {
  const headers = { 'idempotency-key': `pay-${orderNo}`, 'x-client-id': 'shop-backend' };
  await expect(request.post('/api/payments', { headers, data: body(), timeout: 500 })).rejects.toThrow(/Timeout/);
  for (let attempt = 2; attempt <= 10; attempt++) {
    const response = await request.post('/api/payments', { headers, data: body(), timeout: 10_000 });
    if (response.status() !== 409) return categorizeResponse(response.status(), response.headers());
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '1') * 1000));
  }
  return 'in progress';
}
