import { onlyLayers } from '../lib/lab/settings';
import { CheckoutPage, chargeCount, createOrder, expect, test } from './fixtures';

test('the timeline shows a duplicate stopped by layer 3 as a lane that ends at layer 3, with the reason', async ({
  request,
  browser,
  page,
}) => {
  const layers = onlyLayers('stateMachine');
  const orderNo = await createOrder(request, { layers });
  // Two customers' browsers (two sessions) pay the same order, one after the other.
  for (let i = 0; i < 2; i++) {
    const context = await browser.newContext();
    const checkout = await new CheckoutPage(await context.newPage()).open(orderNo);
    await checkout.payButton.click();
    await expect(checkout.outcome).toContainText(i === 0 ? 'Payment successful' : 'Already paid');
    if (i === 1) await expect(checkout.outcome).toContainText('Answered by layer 3, state machine');
    await context.close();
  }
  expect(await chargeCount(orderNo)).toBe(1);

  // Two sessions paid: the room's view shows both lanes (each attendee's own lab shows only their own).
  await page.goto('/lab/room');
  await page.getByRole('searchbox').fill(orderNo);
  // The payment requests (the receipt worker draws a lane for the order too).
  const lanes = page.locator(`li.lane[data-order-no="${orderNo}"][data-channel="browser"]`);
  await expect(lanes).toHaveCount(2);
  const stopped = lanes.filter({ has: page.locator('[data-step="stateMachine"][data-decision="stopped"]') });
  await expect(stopped).toHaveCount(1);
  const steps = stopped.locator('ol.steps > li');
  // The last defence on the lane is layer 3, stopped, with its reason; then only the outcome.
  await expect(steps.nth(-2)).toHaveAttribute('data-step', 'stateMachine');
  await expect(steps.nth(-2)).toContainText('0 rows: already PAID');
  await expect(steps.nth(-1)).toHaveAttribute('data-step', 'outcome');
  await expect(steps.nth(-1)).toContainText('duplicate');
  await expect(stopped.locator('[data-step="bank"]')).toHaveCount(0);
});

test('the timeline shows the key each request used: under paramHash a double click is two keys, two charges', async ({
  request,
  page,
}) => {
  const orderNo = await createOrder(request, { layers: onlyLayers('requestKey'), keys: { strategy: 'paramHash' } });
  const checkout = await new CheckoutPage(page).open(orderNo);
  await expect(page.getByRole('list', { name: 'Defences for this order' })).toContainText(
    '2 Request key: on (key: hash of the parameters)',
  );
  await checkout.payButton.dblclick();
  await expect.poll(() => chargeCount(orderNo), { timeout: 10_000 }).toBe(2);

  await page.goto('/lab');
  await page.getByRole('searchbox').fill(orderNo);
  const claimed = page.locator(
    `li.lane[data-order-no="${orderNo}"][data-channel="browser"] [data-step="requestKey"][data-decision="claimed"]`,
  );
  await expect(claimed).toHaveCount(2);
  const keys = (await claimed.allTextContents()).map((text) => /key (params:\S+)/.exec(text)?.[1]);
  expect(keys.every((key) => key?.startsWith('params:'))).toBe(true);
  expect(new Set(keys).size).toBe(2);
});
