// Source 2: the client's network. A response lost on its way back (the customer retries by hand), and
// an HTTP client that times out and retries by itself with the same Idempotency-Key.
import { expect } from '../fixtures';
import { categorizeResponse, openCheckout, scenario, seesOn } from './cell';

scenario('lost-response', async ({ page, orderNo }) => {
  const pay = await openCheckout(page, orderNo);
  // Let the server action run to the end, then drop its response before it reaches the browser.
  await page.route(`**/checkout/${orderNo}`, async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    await route.fetch();
    await route.abort('connectionreset');
  });
  await pay.click();
  await expect(page.getByRole('heading', { name: 'Something went wrong' })).toBeVisible();
  await page.unroute(`**/checkout/${orderNo}`);
  await page.reload();
  await page.getByRole('button', { name: /Pay/ }).click();
  return seesOn(page);
});

scenario('client-retry', async ({ request, orderNo }) => {
  const headers = { 'idempotency-key': `pay-${orderNo}`, 'x-client-id': 'shop-backend' };
  const data = { orderNo, amountCents: 4200 };
  // Attempt 1 gives up after 500 ms (the bank takes 1.2 s); the server goes on and charges.
  await expect(request.post('/api/payments', { headers, data, timeout: 500 })).rejects.toThrow(/Timeout/);
  // Then the client retries with the same key, waiting as told by Retry-After, like a well-behaved client.
  for (let attempt = 2; attempt <= 10; attempt++) {
    const response = await request.post('/api/payments', { headers, data, timeout: 10_000 });
    if (response.status() !== 409) return categorizeResponse(response.status(), response.headers());
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '1') * 1000));
  }
  return 'in progress';
});
