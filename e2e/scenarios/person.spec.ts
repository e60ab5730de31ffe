// Source 1: the person. Double clicks, Enter twice, a second tab, a refresh during a stall, the back
// button, stale and foreign page tokens.
import type { Page } from '@playwright/test';
import { chargeCount, expect } from '../fixtures';
import { keepTheBankSlow, openCheckout, scenario, seesOn, sessionOf, testRedis } from './cell';
import type { Sees } from './matrix';

scenario('double-click', async ({ page, orderNo }) => {
  const pay = await openCheckout(page, orderNo);
  await pay.dblclick();
  return seesOn(page);
});

scenario('double-enter', async ({ page, orderNo }) => {
  const pay = await openCheckout(page, orderNo);
  await pay.focus();
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  return seesOn(page);
});

scenario('two-tabs', async ({ browser, orderNo, db }) => {
  // Two browser contexts: two sessions, truly concurrent (one page would queue its server actions).
  const contexts = await Promise.all([browser.newContext(), browser.newContext()]);
  const pages = await Promise.all(contexts.map((context) => context.newPage()));
  const loading = performance.now();
  const buttons = await Promise.all(pages.map((page) => openCheckout(page, orderNo)));
  // "At once" is as close as this machine manages now: the bank stays slow for several page loads.
  await keepTheBankSlow(db, orderNo, 3 * (performance.now() - loading));
  await Promise.all(buttons.map((button) => button.click()));
  const seen = await Promise.all(pages.map((page) => seesOn(page)));
  await Promise.all(contexts.map((context) => context.close()));
  // The customer who lost the race is the one the defences speak to.
  return seen.find((sees) => sees !== 'paid') ?? 'paid';
});

scenario('refresh', async ({ page, orderNo, db }) => {
  const loading = performance.now();
  const pay = await openCheckout(page, orderNo);
  // The first payment must still be running when the refreshed page pays: the bank stays slow for the wait
  // below, a reload and a click, as long as this machine takes for them now (the declared stall at least).
  await keepTheBankSlow(db, orderNo, 1_300 + 8 * (performance.now() - loading));
  // The payment has reached the bank (a reload before the server has it would cancel it, not duplicate it: on a
  // busy machine that can take longer than any fixed wait): its charge is on the statement, the answer slow,
  // and the page seems stuck …
  await pay.click();
  await expect.poll(() => chargeCount(orderNo), { timeout: 20_000 }).toBeGreaterThan(0);
  await page.reload(); // a new page: a new token, a fresh button
  const again = page.getByRole('button', { name: /Pay/ });
  await again.click();
  return seesOn(page);
});

scenario('back-button', async ({ page, orderNo }) => {
  const pay = await openCheckout(page, orderNo);
  await pay.click();
  await expect(page.getByRole('status')).toContainText('Payment successful');
  await page.getByRole('link', { name: 'Lab', exact: true }).click();
  await expect(page).toHaveURL(/\/lab$/);
  await page.goBack();
  await page.getByRole('button', { name: /Pay/ }).click();
  return seesOn(page);
});

scenario('expired-token', async ({ page, context, orderNo, layers }) => {
  await openCheckout(page, orderNo);
  // The customer left the page open past the token's lifetime.
  await testRedis().pexpire(`checkout:token:${orderNo}:s.${await sessionOf(context)}`, 1);
  return payRefusedByTokenThenReloadAndPay(page, layers.token);
});

scenario('foreign-token', async ({ page, browser, orderNo, layers }) => {
  // Another session's page token ends up in this customer's form (a copied or leaked form).
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await openCheckout(otherPage, orderNo);
  const foreign = await otherPage.locator('input[name="token"]').inputValue();
  await other.close();

  await openCheckout(page, orderNo);
  const own = await page.locator('input[name="token"]').inputValue();
  // The form goes out carrying the other session's token in place of this page's own.
  let swapped = false;
  await page.route(`**/checkout/${orderNo}`, async (route) => {
    const body = route.request().postData();
    if (swapped || route.request().method() !== 'POST' || !body?.includes(own)) return route.continue();
    swapped = true;
    await route.continue({ postData: body.replaceAll(own, foreign) });
  });
  return payRefusedByTokenThenReloadAndPay(page, layers.token);
});

/** Pays with a token that must not work (refused when layer 1 is on), then reloads the page and pays again. */
async function payRefusedByTokenThenReloadAndPay(page: Page, tokenOn: boolean): Promise<Sees> {
  await page.getByRole('button', { name: /Pay/ }).click();
  const first = await seesOn(page);
  if (tokenOn) {
    expect(first).toBe('already submitted');
    // This page never sent its token: it is stale, and the customer is told how to pay.
    await expect(page.getByRole('status')).toContainText('This page expired: reload to pay');
  }
  await page.reload();
  await page.getByRole('button', { name: /Pay/ }).click();
  return seesOn(page);
}
