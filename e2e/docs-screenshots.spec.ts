// `npm run docs:screenshots`: the pictures in README.md and docs/workshop.md, taken from the running app
// so one command refreshes them all.
import path from 'node:path';
import { ALL_OFF, ALL_ON, CheckoutPage, createOrder, expect, test } from './fixtures';

const IMAGES = path.resolve(import.meta.dirname, '../docs/images');
test.use({ viewport: { width: 1280, height: 820 } });
test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ request }) => {
  await request.post('/api/lab/reset');
});

test('home', async ({ page }) => {
  await page.goto('/');
  await page.screenshot({ path: `${IMAGES}/home.png` });
});

test('checkout, all defences on: a double click is charged once', async ({ page, request }) => {
  const orderNo = await createOrder(request, { layers: ALL_ON, faults: { bankLatencyMs: 600 } });
  const checkout = await new CheckoutPage(page).open(orderNo);
  await checkout.payButton.dblclick();
  await expect(checkout.outcome).toContainText('Payment successful');
  await expect(checkout.chargeCount).toHaveText('Charged once.');
  await page.screenshot({ path: `${IMAGES}/checkout-once.png` });
});

test('checkout, every defence off: a double click is charged twice', async ({ page, request }) => {
  const orderNo = await createOrder(request, { layers: ALL_OFF, faults: { bankLatencyMs: 600 } });
  const checkout = await new CheckoutPage(page).open(orderNo);
  await checkout.payButton.dblclick();
  await expect(checkout.chargeCount).toHaveText('Charged 2 times for one order!', { timeout: 15_000 });
  await page.screenshot({ path: `${IMAGES}/checkout-twice.png` });
});

test('lab: a duplicate stopped by layer 3 on the timeline', async ({ page, request }) => {
  await request.put('/api/lab/config', { data: { layers: { pendingUi: false, token: false, requestKey: false } } });
  const orderNo = await createOrder(request, {
    layers: { ...ALL_ON, pendingUi: false, token: false, requestKey: false },
  });
  // Paid, then the page reloaded and paid again (a new token): both lanes are this browser's, in its own lab.
  for (let i = 0; i < 2; i++) {
    const checkout = await new CheckoutPage(page).open(orderNo);
    await checkout.payButton.click();
    await checkout.outcomeText();
  }
  await page.goto('/lab');
  await page.getByRole('searchbox').fill(orderNo);
  await expect(page.locator('li.lane[data-channel="browser"]')).toHaveCount(2);
  await page.screenshot({ path: `${IMAGES}/lab.png`, fullPage: true });
  await request.post('/api/lab/reset');
});

test('scenario matrix', async ({ page }) => {
  await page.goto('/scenarios');
  await page.screenshot({ path: `${IMAGES}/scenarios.png`, fullPage: true });
});
