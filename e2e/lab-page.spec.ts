// The lab page: its switches and settings, across the tabs of one browser. Each browser session has a lab
// of its own, so these tests change only their own and run beside every other spec (the global settings,
// the presenter's, are tested by test/hostile/room.int.test.ts).
import type { Page } from '@playwright/test';
import { CheckoutPage, chargeCount, expect, test } from './fixtures';

async function newOrderFromHome(page: Page): Promise<string> {
  await page.goto('/');
  await page.getByRole('button', { name: 'Start a checkout' }).click();
  await expect(page).toHaveURL(/\/checkout\//);
  return page.url().split('/').pop() ?? '';
}

const switchNamed = (page: Page, name: string) => page.getByRole('switch', { name: new RegExp(name) });

test('the lab switches change behaviour without a restart, in every open tab', async ({ context }) => {
  const labA = await context.newPage();
  const labB = await context.newPage();
  await labA.goto('/lab');
  // This browser's lab: a slow bank, so the double click below has time to be a double.
  await labA.request.put('/api/lab/config', { data: { faults: { bankLatencyMs: 800 } } });
  await labB.goto('/lab');

  // A checkout already open in its own tab, before anything is switched off.
  const checkoutTab = await context.newPage();
  const orderNo = await newOrderFromHome(checkoutTab);
  const checkout = new CheckoutPage(checkoutTab);
  await expect(checkoutTab.getByRole('list', { name: 'Defences for this order' })).toContainText('0 Pending UI: on');

  for (const name of [
    'Pending UI',
    'One-time token',
    'Request key',
    'State machine',
    'Unique constraint',
    'Bank key',
  ]) {
    await switchNamed(labA, name).uncheck();
  }
  // The other lab tab and the open checkout follow, without a reload.
  for (const name of ['Pending UI', 'Bank key']) await expect(switchNamed(labB, name)).not.toBeChecked();
  await expect(checkoutTab.getByRole('list', { name: 'Defences for this order' })).toContainText('0 Pending UI: off');
  await expect(checkoutTab.getByRole('list', { name: 'Defences for this order' })).toContainText('5 Bank key: off');

  await checkout.payButton.dblclick();
  await expect(checkout.chargeCount).toHaveText('Charged 2 times for one order!', { timeout: 15_000 });
  expect(await chargeCount(orderNo)).toBe(2);

  // Switched back on from the other tab: the next checkout is safe again.
  await labB.getByRole('button', { name: /Reset/ }).click();
  await expect(switchNamed(labA, 'State machine')).toBeChecked();
  const safeTab = await context.newPage();
  const safeOrder = await newOrderFromHome(safeTab);
  const safe = new CheckoutPage(safeTab);
  await safe.payButton.dblclick();
  await expect(safe.outcome).toContainText('Payment successful');
  await safeTab.waitForTimeout(1_000);
  expect(await chargeCount(safeOrder)).toBe(1);
});

test('the lease and the recovery faults are lab settings, saved from the lab page', async ({ page, request }) => {
  await page.goto('/lab');
  const lease = page.getByLabel('Lease (ms)');
  await expect(lease).toBeEnabled();
  await lease.fill('1000');
  await page.getByLabel(/Late charge \(ms\)/).fill('1500');
  await page.getByLabel(/Pause between the claim and the bank/).fill('2500');
  await page.getByLabel(/Crash the app holding its claims/).check();
  await expect(async () => {
    // The lab page edits this browser's own lab (each attendee of a workshop has one).
    const config = await (await page.request.get('/api/lab/config')).json();
    expect(config.claims).toEqual({ leaseMs: 1000 });
    expect(config.faults).toMatchObject({ bankLateChargeMs: 1500, stallBeforeBankMs: 2500, crashBeforeCharge: true });
  }).toPass({ timeout: 5_000 });
  // Out of range is refused by the server, naming the field.
  const bad = await request.put('/api/lab/config', {
    data: { claims: { leaseMs: 50 }, faults: { bankLateChargeMs: 20_000 } },
  });
  expect(bad.status()).toBe(400);
  expect(((await bad.json()).errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual([
    'claims.leaseMs',
    'faults.bankLateChargeMs',
  ]);
});

test('layer 2’s key strategy is chosen on the lab page, each explained in a sentence; reset restores business', async ({
  page,
  request,
}) => {
  await page.goto('/lab');
  const strategies = page.getByRole('group', { name: 'Layer 2’s key' });
  await expect(strategies.getByRole('radio')).toHaveCount(3);
  await expect(strategies.getByRole('radio', { name: /Business identity/ })).toBeChecked();
  await expect(strategies).toContainText('every new submit hashes to a new key');
  await strategies.getByRole('radio', { name: /Hash of the parameters/ }).check();
  await expect(async () => {
    expect((await (await page.request.get('/api/lab/config')).json()).keys).toEqual({ strategy: 'paramHash' });
  }).toPass({ timeout: 5_000 });
  const bad = await request.put('/api/lab/config', { data: { keys: { strategy: 'timestamp' } } });
  expect(bad.status()).toBe(400);
  expect((await bad.json()).errors[0].field).toBe('keys.strategy');
  expect((await (await page.request.post('/api/lab/reset')).json()).keys).toEqual({ strategy: 'business' });
});

test('GET /api/lab/config returns the whole; PUT merges a partial change', async ({ page }) => {
  await page.goto('/lab'); // a session: its own lab
  const request = page.request;
  const put = await request.put('/api/lab/config', { data: { layers: { token: false } } });
  expect(put.headers()['x-lab-scope']).toBe('mine');
  expect(put.status()).toBe(200);
  const body = await put.json();
  expect(body.layers).toEqual({
    pendingUi: true,
    token: false,
    requestKey: true,
    stateMachine: true,
    uniqueConstraint: true,
    bankKey: true,
  });
  expect(body.faults).toEqual({
    bankLatencyMs: 0,
    bankFailure: 'none',
    bankTimeoutAfterCharge: false,
    crashAfterCharge: false,
    receiptCrashBeforeAck: false,
    stallBeforeBankMs: 0,
    bankLateChargeMs: 0,
    crashBeforeCharge: false,
    dropResponse: false,
  });
  expect(body.claims).toEqual({ leaseMs: 30_000 });
  expect(body.keys).toEqual({ strategy: 'business' });
  expect(body.gateway).toEqual({ timeoutMs: 2000, retries: 1 });
  const bad = await request.put('/api/lab/config', { data: { layers: { token: 'no' } } });
  expect(bad.status()).toBe(400);
  expect((await bad.json()).errors[0].field).toBe('layers.token');
  const reset = await request.post('/api/lab/reset');
  expect((await reset.json()).layers.token).toBe(true);
});
