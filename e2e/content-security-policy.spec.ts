// Every page runs under a Content-Security-Policy with a per-request nonce (proxy.ts): nothing on it may be
// blocked, and React must still hydrate (a script without the nonce would be refused, and the page would be
// left as server-rendered HTML: links would reload it, the checkout would post a plain form).
import type { Page } from '@playwright/test';
import { ALL_ON, CheckoutPage, createOrder, expect, test } from './fixtures';

type Watched = Window & { __violations?: string[]; __sameDocument?: boolean };

/** Everything the browser reports against the page's policy: violation events and console messages. */
async function watchPolicy(page: Page): Promise<() => Promise<string[]>> {
  const reported: string[] = [];
  page.on('console', (message) => {
    if (/Content[- ]Security[- ]Policy/i.test(message.text())) reported.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => reported.push(`error: ${error.message}`));
  // Playwright's init scripts are not subject to the page's policy.
  await page.addInitScript(() => {
    const watched = window as Watched;
    watched.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      watched.__violations?.push(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`);
    });
  });
  return async () => [...reported, ...(await page.evaluate(() => (window as Watched).__violations ?? []))];
}

/** A click on a site link that navigates without reloading the document: only a hydrated page does that. */
async function expectHydrated(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as Watched).__sameDocument = true;
  });
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Scenarios' }).click();
  // The client-side navigation fetches the next page's payload first: beside a second test run, more than 5 s.
  await expect(page).toHaveURL(/\/scenarios$/, { timeout: 20_000 });
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  expect(await page.evaluate(() => (window as Watched).__sameDocument), 'a client-side navigation').toBe(true);
}

test.describe('Content-Security-Policy', () => {
  for (const path of ['/', '/lab', '/lab/room', '/scenarios', '/api/docs', '/workshop/slides']) {
    test(`${path} loads and hydrates with nothing blocked`, async ({ page }) => {
      const reports = await watchPolicy(page);
      const response = await page.goto(path);
      const policy = response?.headers()['content-security-policy'] ?? '';
      expect(policy).toMatch(/script-src 'self' 'nonce-[^']+'/);
      expect(policy).toContain("frame-ancestors 'none'");
      await expectHydrated(page);
      expect(await reports()).toEqual([]);
    });
  }

  test('a checkout pays, with nothing blocked', async ({ page, request }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const reports = await watchPolicy(page);
    const response = await page.goto(`/checkout/${orderNo}`);
    expect(response?.headers()['content-security-policy']).toMatch(/script-src 'self' 'nonce-[^']+'/);
    const checkout = new CheckoutPage(page);
    await checkout.payButton.click();
    await expect(checkout.outcome).toContainText('Payment successful', { timeout: 15_000 });
    await expect(checkout.status).toHaveText('PAID');
    await expectHydrated(page);
    expect(await reports()).toEqual([]);
  });

  test('a refund form refunds, with nothing blocked', async ({ page, request }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const paid = await request.post('/api/payments', {
      headers: { 'idempotency-key': `pay-${orderNo}`, 'x-client-id': 'csp-spec' },
      data: { orderNo, amountCents: 4_200 },
    });
    expect(paid.status()).toBe(201);
    const reports = await watchPolicy(page);
    await page.goto(`/checkout/${orderNo}`);
    await page.getByRole('button', { name: 'Refund…' }).click();
    await expect(page).toHaveURL(new RegExp(`/checkout/${orderNo}/refunds/rq_`));
    const response = await page.reload();
    expect(response?.headers()['content-security-policy']).toMatch(/script-src 'self' 'nonce-[^']+'/);
    await page.getByLabel('Amount to refund, in US dollars').fill('5.00');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    await expect(page.getByRole('status')).toContainText('Refunded.', { timeout: 15_000 });
    await expectHydrated(page);
    expect(await reports()).toEqual([]);
  });

  test('the pages cannot be framed', async ({ page }) => {
    const reports = await watchPolicy(page);
    await page.goto('/problems');
    // A page of the app framing the app: the policy's frame-ancestors refuses it even from its own origin.
    await page.evaluate(() => {
      const frame = document.createElement('iframe');
      frame.src = '/lab';
      frame.title = 'framed';
      document.body.append(frame);
    });
    await expect
      .poll(async () => (await reports()).some((line) => /frame-ancestors/.test(line)), { timeout: 10_000 })
      .toBe(true);
    const framed = page.frameLocator('iframe[title="framed"]');
    await expect(framed.getByRole('heading', { level: 1 })).toHaveCount(0);
  });
});
