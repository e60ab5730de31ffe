import type { Locator } from '@playwright/test';
import { SWALLOWED_CLICK_DETAIL } from '../lib/lab/browser-event';
import { onlyLayers } from '../lib/lab/settings';
import { ALL_ON, CheckoutPage, chargeCount, createOrder, expect, test } from './fixtures';

/** The steps of a lane's path, in the order they are drawn, then its outcome. */
const pathOf = (lane: Locator) =>
  lane.locator('ol.steps > li').evaluateAll((steps) => steps.map((step) => (step as HTMLElement).dataset.step));

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
  await expect(stopped).toHaveAttribute('data-ends-at', 'stateMachine');
  const steps = stopped.locator('ol.steps > li');
  // The last defence on the lane is layer 3, stopped, with its reason; then only the outcome.
  await expect(steps.nth(-2)).toHaveAttribute('data-step', 'stateMachine');
  await expect(steps.nth(-2)).toContainText('0 rows: already PAID');
  await expect(steps.nth(-1)).toHaveAttribute('data-step', 'outcome');
  await expect(steps.nth(-1)).toContainText('duplicate');
  await expect(stopped.locator('[data-step="bank"]')).toHaveCount(0);
});

test('a lane stopped by layer 3 ends there, its key released as the consequence; both lanes in layer order', async ({
  page,
  request,
}) => {
  const loading = performance.now();
  await page.goto('/lab');
  // Layers 2 and 3: two callers, two keys; layer 4 off, marked before the statement's verdict. The first is
  // still at the bank when the second arrives: the bank is slow for a second and several page loads now.
  const orderNo = await createOrder(page.request, {
    layers: onlyLayers('requestKey', 'stateMachine'),
    faults: { bankLatencyMs: Math.min(9_000, Math.round(1_000 + 4 * (performance.now() - loading))) },
    // A lease far longer than the bank's answer: whatever another test left in the lab, nobody takes it over.
    claims: { leaseMs: 30_000 },
  });
  const pay = (caller: typeof request, key: string) =>
    caller.post('/api/payments', {
      headers: { 'idempotency-key': key },
      data: { orderNo, amountCents: 4_200 },
    });
  const first = pay(page.request, `first-${orderNo}`);
  await expect
    .poll(async () => (await (await page.request.get(`/api/orders/${orderNo}`)).json()).status)
    .toBe('PROCESSING');
  // The same caller under another key (a wrong key strategy, a second tab): layer 2 lets it through.
  expect((await pay(page.request, `second-${orderNo}`)).status()).toBe(409);
  expect((await first).status()).toBe(201);

  // Opened on this order (?order=): the owner's lab shows both lanes.
  await page.goto(`/lab?order=${orderNo}`);
  await expect(page.getByRole('searchbox')).toHaveValue(orderNo);
  const lanes = page.locator(`li.lane[data-order-no="${orderNo}"][data-channel="api"]`);
  const stopped = lanes.and(page.locator('[data-ends-at="stateMachine"]'));
  const paid = lanes.and(page.locator('[data-ends-at="bank"]'));
  await expect(stopped).toHaveCount(1);
  await expect(paid).toHaveCount(1);

  // Polled: a lane's last steps reach the lab a moment after its answer (published within 50 ms, later on a
  // busy machine), and the lab reads the timeline every 700 ms.
  await expect.poll(() => pathOf(stopped)).toEqual(['requestKey', 'stateMachine', 'outcome']);
  const end = stopped.locator('[data-end]');
  await expect(end).toHaveAttribute('data-decision', 'stopped');
  await expect(end).toContainText('Stopped here by layer 3');
  await expect(end).toContainText('the first request is still processing');
  const then = end.locator('[data-consequence]');
  await expect(then).toHaveCount(1);
  await expect(then).toHaveAttribute('data-step', 'requestKey');
  await expect(then).toContainText('2 Request key released');

  await expect
    .poll(() => pathOf(paid))
    .toEqual(['requestKey', 'stateMachine', 'uniqueConstraint', 'bankKey', 'bank', 'outcome']);
  await expect(paid.locator('[data-consequence]')).toContainText('2 Request key completed');
  // When each began, relative to the order's first request.
  await expect(paid.getByTitle('Since the first request of this order')).toHaveText('first');
  await expect(stopped.getByTitle('Since the first request of this order')).toHaveText(/^\+[\d,]+ ms$/);

  // The order filter: cleared by its button, set again by clicking the order in a lane's header.
  await page.getByRole('button', { name: 'Clear filter' }).click();
  await expect(page.getByRole('searchbox')).toHaveValue('');
  await paid.getByRole('button', { name: orderNo }).click();
  await expect(page.getByRole('searchbox')).toHaveValue(orderNo);
});

test('a click the pending UI swallowed: reported as the checkout will, drawn as a lane that ends at layer 0', async ({
  page,
  request,
}) => {
  await page.goto('/lab');
  const orderNo = await createOrder(page.request, { layers: ALL_ON });
  const report = (data: unknown, caller = page.request) => caller.post('/api/lab/timeline', { data });
  const fieldsOf = async (answer: Awaited<ReturnType<typeof report>>) => {
    expect(answer.status()).toBe(400);
    return ((await answer.json()).errors as Array<{ field: string }>).map((error) => error.field);
  };
  // Refused, naming the field, and nothing drawn.
  expect(await fieldsOf(await report({ orderNo: 'ord_nope', event: 'click-swallowed' }))).toEqual(['orderNo']);
  expect(await fieldsOf(await report({ orderNo, event: 'double-click' }))).toEqual(['event']);
  expect(await fieldsOf(await report({ orderNo, event: 'click-swallowed' }, request))).toEqual(['Cookie']);
  const form = await page.request.post('/api/lab/timeline', { form: { orderNo, event: 'click-swallowed' } });
  expect(form.status()).toBe(415);
  expect((await report({ orderNo: 'ord_0000000000000000', event: 'click-swallowed' })).status()).toBe(404);
  const theirs = await request.post('/api/orders', { headers: { 'x-client-id': 'someone-else' }, data: {} });
  const notMine = (await theirs.json()).orderNo as string;
  expect((await report({ orderNo: notMine, event: 'click-swallowed' })).status()).toBe(404);

  expect((await report({ orderNo, event: 'click-swallowed' })).status()).toBe(204);
  await page.getByRole('searchbox').fill(orderNo);
  const lane = page.locator(`li.lane[data-order-no="${orderNo}"]`);
  await expect(lane).toHaveCount(1);
  await expect(lane).toHaveAttribute('data-ends-at', 'pendingUi');
  const step = lane.locator('[data-step="pendingUi"][data-decision="stopped"]');
  await expect(step).toContainText('0 Pending UI');
  await expect(step).toContainText(SWALLOWED_CLICK_DETAIL);
  await expect(step).toContainText('Stopped here by layer 0');
  await expect(lane).not.toContainText(/(?<![\d,])0 ms/); // no duration where there is none
});

test('after a failure past the bank, each lane says which release rule completed, released or left its claims', async ({
  page,
}) => {
  await page.goto('/lab');
  // The charge goes through, then the downstream notification fails; the bank's key is off, as in exercise 13.
  const rules = {
    noMoneyMoved: ['2 Request key completed', 'the money moved before the step that failed'],
    anyError: ['2 Request key released', 'released by the rule “any error”', '3 State machine released'],
    never: ['2 Request key left', 'a retry is refused until its lease of 30000 ms runs out', '3 State machine left'],
  } as const;
  for (const [release, says] of Object.entries(rules)) {
    const orderNo = await createOrder(page.request, {
      layers: { ...ALL_ON, bankKey: false },
      faults: { notifyFailsAfterCharge: true },
      claims: { leaseMs: 30_000, release: release as keyof typeof rules },
    });
    const answer = await page.request.post('/api/payments', {
      headers: { 'idempotency-key': `notify-${orderNo}` },
      data: { orderNo, amountCents: 4_200 },
    });
    expect(answer.status()).toBe(500);
    expect((await answer.json()).type).toBe('/problems/failed-after-bank');
    await page.goto(`/lab?order=${orderNo}`);
    const lane = page.locator(`li.lane[data-order-no="${orderNo}"][data-channel="api"]`);
    await expect(lane).toHaveAttribute('data-ends-at', 'bank');
    const then = lane.locator('[data-consequence]');
    await expect(then.first()).toContainText('notifying a downstream system failed');
    for (const words of says) await expect(then.filter({ hasText: words })).not.toHaveCount(0);
    await expect(lane.locator('[data-decision="failed_after_bank"]')).toHaveCount(1);
  }
});
