// A workshop room on one server: every attendee (browser session) has a lab of their own. One attendee
// switching every defence off changes their own checkouts only; each lab shows its own lanes; the presenter's
// room shows everyone's, and counts the double charge.
import type { Browser, Page } from '@playwright/test';
import { SWITCHES } from '../lib/lab/layer-info';
import { CheckoutPage, chargeCount, expect, test } from './fixtures';

async function attendee(browser: Browser) {
  const context = await browser.newContext();
  return { context, page: await context.newPage() };
}

async function startCheckout(page: Page): Promise<string> {
  await page.goto('/');
  await page.getByRole('button', { name: 'Start a checkout' }).click();
  await expect(page).toHaveURL(/\/checkout\/ord_/);
  return page.url().split('/').pop() ?? '';
}

async function lanesOf(page: Page, orderNo: string) {
  await page.getByRole('searchbox').fill(orderNo);
  return page.locator(`li.lane[data-order-no="${orderNo}"][data-channel="browser"]`);
}

test('each attendee has a lab of their own; the room sees everyone', async ({ browser }) => {
  const a = await attendee(browser);
  const b = await attendee(browser);

  // A switches everything off in A's lab.
  await a.page.goto('/lab');
  for (const { name } of SWITCHES) {
    const toggle = a.page.getByRole('switch', { name: new RegExp(name) });
    await expect(toggle).toBeEnabled();
    await toggle.uncheck();
  }
  await expect(async () => {
    const mine = await (await a.page.request.get('/api/lab/config')).json();
    expect(Object.values(mine.layers)).toEqual([false, false, false, false, false, false]);
  }).toPass({ timeout: 5_000 });

  // A's double click charges twice; B's, at the same time, once: A's switches are not B's.
  const [orderA, orderB] = await Promise.all([startCheckout(a.page), startCheckout(b.page)]);
  await Promise.all([new CheckoutPage(a.page).payButton.dblclick(), new CheckoutPage(b.page).payButton.dblclick()]);
  await expect.poll(() => chargeCount(orderA), { timeout: 10_000 }).toBe(2);
  await expect(new CheckoutPage(b.page).outcome).toContainText('Payment successful');
  await b.page.waitForTimeout(500); // a second charge, if there were one, would be on its way
  expect(await chargeCount(orderB)).toBe(1);

  // Each lab shows its own lanes only.
  await a.page.goto('/lab');
  await expect(await lanesOf(a.page, orderA)).toHaveCount(2);
  await expect(await lanesOf(a.page, orderB)).toHaveCount(0);
  await b.page.goto('/lab');
  await expect(await lanesOf(b.page, orderB)).not.toHaveCount(0);
  await expect(await lanesOf(b.page, orderA)).toHaveCount(0);
  // B's own lab is untouched.
  expect((await (await b.page.request.get('/api/lab/config')).json()).layers.stateMachine).toBe(true);

  // The room (on loopback, open to the presenter at the keyboard) sees both, and counts A's double charge.
  const room = await attendee(browser);
  await room.page.goto('/lab/room');
  await expect(room.page.getByRole('heading', { name: 'The room' })).toBeVisible();
  await expect(room.page.getByRole('table', { name: /Double charges/ })).toContainText(orderA);
  await expect(await lanesOf(room.page, orderA)).toHaveCount(2);
  await expect(await lanesOf(room.page, orderB)).not.toHaveCount(0);

  await Promise.all([a.context.close(), b.context.close(), room.context.close()]);
});

test('an order started in one browser is not found in another, unless opened with its link', async ({ browser }) => {
  const owner = await attendee(browser);
  const stranger = await attendee(browser);
  const orderNo = await startCheckout(owner.page);
  const link = await owner.page.getByRole('link', { name: 'this order’s link' }).getAttribute('href');
  expect(link).toMatch(new RegExp(`^/checkout/${orderNo}\\?join=`));

  const refused = await stranger.page.goto(`/checkout/${orderNo}`);
  expect(refused?.status()).toBe(404);
  expect((await stranger.page.request.get(`/api/orders/${orderNo}`)).status()).toBe(404);

  await stranger.page.goto(link ?? '');
  await new CheckoutPage(stranger.page).payButton.click();
  await expect(new CheckoutPage(stranger.page).outcome).toContainText('Payment successful');
  expect(await chargeCount(orderNo)).toBe(1);
  await Promise.all([owner.context.close(), stranger.context.close()]);
});
