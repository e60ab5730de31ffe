// `npm run docs:screenshots`: the pictures in README.md and docs/workshop.md, taken from the running app
// at a projector's 1366×768, so one command refreshes them all; and each again in Chinese, under
// docs/images/zh-CN/, for docs/workshop.zh-CN.md. The Chinese pictures need a CJK font on the machine
// (Debian: fonts-noto-cjk); without one Chromium draws every character as a box, so check them before committing.
import path from 'node:path';
import type { Locator, Page } from '@playwright/test';
import { ALL_OFF, ALL_ON, CheckoutPage, createOrder, expect, test } from './fixtures';

const IMAGES = path.resolve(import.meta.dirname, '../docs/images');

/**
 * The page as it is now, in Chinese: switched in place with the header's switcher, as a reader would (the page
 * keeps what it shows, a checkout's outcome included), its picture under zh-CN/, then English again.
 */
async function screenshotInChinese(page: Page, name: string, ready?: Locator) {
  await page.getByLabel('Language').selectOption('zh-CN');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  if (ready) await expect(ready).toBeVisible({ timeout: 10_000 });
  await page.screenshot({ path: `${IMAGES}/zh-CN/${name}` });
  await page.getByLabel('语言').selectOption('en');
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
}
test.use({ viewport: { width: 1366, height: 768 } });
test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ request }) => {
  await request.post('/api/lab/reset');
});

test('home', async ({ page }) => {
  await page.goto('/');
  await page.screenshot({ path: `${IMAGES}/home.png` });
  await screenshotInChinese(page, 'home.png');
});

test('checkout, all defences on: a double click is charged once', async ({ page, request }) => {
  const orderNo = await createOrder(request, { layers: ALL_ON, faults: { bankLatencyMs: 600 } });
  const checkout = await new CheckoutPage(page).open(orderNo);
  await checkout.payButton.dblclick();
  await expect(checkout.outcome).toContainText('Payment successful');
  await expect(checkout.chargeCount).toHaveText('Charged once.');
  await page.screenshot({ path: `${IMAGES}/checkout-once.png` });
  await screenshotInChinese(page, 'checkout-once.png', page.getByRole('status').getByText('支付成功'));
});

test('checkout, every defence off: a double click is charged twice', async ({ page, request }) => {
  const orderNo = await createOrder(request, { layers: ALL_OFF, faults: { bankLatencyMs: 600 } });
  const checkout = await new CheckoutPage(page).open(orderNo);
  await checkout.payButton.dblclick();
  await expect(checkout.chargeCount).toHaveText('Charged 2 times for one order!', { timeout: 15_000 });
  await expect(checkout.outcome).toContainText('Charged 2 times for one order!');
  await page.screenshot({ path: `${IMAGES}/checkout-twice.png` });
  await screenshotInChinese(page, 'checkout-twice.png', page.getByRole('status').getByText('一个订单被扣款 2 次！'));
});

test('lab: exercise 5 set up, fixed with layer 3, and the loser’s lane ends there', async ({ page, context }) => {
  // As an attendee does it: the preset, then the fix, then two windows of one order (the order's link).
  await page.goto('/lab?exercise=5');
  await page.getByRole('button', { name: 'Set up exercise 5' }).click();
  await expect(page.locator('[data-exercise]')).toHaveAttribute('data-exercise', '5');
  await page.getByRole('switch', { name: /State machine/ }).check();
  await expect
    .poll(async () => (await (await page.request.get('/api/lab/config')).json()).layers.stateMachine)
    .toBe(true);
  const { orderNo } = (await (await page.request.post('/api/orders', { data: {} })).json()) as { orderNo: string };
  const mine = await new CheckoutPage(await context.newPage()).open(orderNo);
  const link = (await mine.page.getByRole('link', { name: 'this order’s link' }).getAttribute('href')) ?? '';
  const other = await (await context.browser()?.newContext())?.newPage();
  if (!other) throw new Error('no second window');
  await other.goto(link);
  const theirs = new CheckoutPage(other);
  await Promise.all([mine.payButton.click(), theirs.payButton.click()]);
  await Promise.all([mine.outcomeText(), theirs.outcomeText()]);
  await page.goto(`/lab?order=${orderNo}`);
  await expect(page.locator(`li.lane[data-order-no="${orderNo}"][data-channel="browser"][data-ends-at]`)).toHaveCount(
    2,
    { timeout: 10_000 },
  );
  await page.screenshot({ path: `${IMAGES}/lab.png` });
  await screenshotInChinese(
    page,
    'lab.png',
    page.locator(`li.lane[data-order-no="${orderNo}"][data-channel="browser"][data-ends-at]`).nth(1),
  );
  await page.request.post('/api/lab/reset');
});

test('scenario matrix', async ({ page }) => {
  await page.goto('/scenarios');
  await page.screenshot({ path: `${IMAGES}/scenarios.png` });
  await screenshotInChinese(page, 'scenarios.png');
});
