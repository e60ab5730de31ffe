import AxeBuilder from '@axe-core/playwright';
import { ALL_OFF, ALL_ON, CheckoutPage, chargeCount, createOrder, expect, test } from './fixtures';

test.describe('checkout', () => {
  test('on a phone, the number of charges is beside the Pay button', async ({ request, checkout, page }) => {
    await page.setViewportSize({ width: 412, height: 915 });
    const orderNo = await createOrder(request, { layers: ALL_OFF });
    await checkout.open(orderNo);
    const beside = page.getByTestId('pay-charges');
    await expect(beside).toHaveText('Card statement: No charge yet.');
    await checkout.payButton.click();
    await expect(beside).toHaveText('Card statement: Charged once.');
    await expect(beside).toBeInViewport();
    await expect(checkout.payButton).toBeInViewport();
  });

  test('double Enter with only the pending UI on: one request leaves the page, and the lab sees the swallowed one', async ({
    request,
    checkout,
    page,
  }) => {
    const orderNo = await createOrder(request, {
      layers: { ...ALL_OFF, pendingUi: true },
      faults: { bankLatencyMs: 800 },
    });
    await checkout.open(orderNo);
    await checkout.payButton.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await expect(page.locator('form[aria-busy="true"]')).toBeVisible();
    await expect(checkout.payButton).toHaveAttribute('aria-disabled', 'true');
    await expect(checkout.outcome).toContainText('Payment successful', { timeout: 15_000 });
    // The Enter the pending UI swallowed left no request, but the page told the lab's timeline (layer 0).
    await expect
      .poll(async () => {
        const { events } = (await (await page.request.get('/api/lab/timeline')).json()) as {
          events: Array<{ orderNo: string; step: string; decision: string }>;
        };
        return events.filter((event) => event.orderNo === orderNo && event.step === 'pendingUi').map((e) => e.decision);
      })
      .toEqual(['stopped']);
    await page.waitForTimeout(1_000); // a queued second request would have landed by now
    expect(await chargeCount(orderNo)).toBe(1);
  });

  test('the same page submitted again after it finished is stopped by the token and sees the order paid', async ({
    request,
    context,
  }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const first = await new CheckoutPage(await context.newPage()).open(orderNo);
    await first.payButton.click();
    await expect(first.outcome).toContainText('Payment successful');
    // The same page, submitted again after it finished (the back button brings it back from cache).
    await first.payButton.click();
    await expect(first.outcome).toContainText('Already submitted');
    await expect(first.outcome).toContainText('the order is paid');
    await expect(first.outcome).toContainText('Answered by layer 1, one-time token');
    expect(await chargeCount(orderNo)).toBe(1);
  });
});

// /lab and /scenarios are checked where their layouts are (every violation, not only the serious ones):
// lab-page.spec.ts at a projector's size with every folded group open, scenarios-page.spec.ts on a phone.
test.describe('accessibility', () => {
  for (const path of ['/', '/checkout/{order}', '/api/docs', '/problems/idempotency-key']) {
    test(`${path} has no serious or critical axe violation`, async ({ page, request }) => {
      const url = path.replace('{order}', await createOrder(request, { layers: ALL_ON }));
      await page.goto(url);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await page.waitForTimeout(300); // the client components' first data
      const results = await new AxeBuilder({ page }).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`)).toEqual([]);
    });
  }
});
