// The back office's refund form (the article's first detail, its second half): a refund's key is a request id the
// form makes once, when it opens, and sends with every submit. A resubmit, a reload and a retry of one form are one
// refund; "New refund" is a new form, a new id, a new refund; the ledger refuses more than is left, saying how much.
// Each test's order belongs to its own browser's session (created and paid through the API with its cookie).
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import type { Layers } from '../lib/lab/settings';
import { ALL_ON, expect, type Faults, openRefund, refund, refundsOf, test } from './fixtures';
import { englishLeft } from './i18n';
import { DEEP_TAG } from './tiers';

/** A $42.00 order of this browser's session (every defence on, unless told); paid through the API unless told not to. */
async function orderOfThisBrowser(
  page: Page,
  { pay = true, layers = ALL_ON, faults = {} }: { pay?: boolean; layers?: Layers; faults?: Faults } = {},
): Promise<string> {
  await page.goto('/'); // the page load gives the browser its session
  const created = await page.request.post('/api/orders', { data: { amountCents: 4_200, lab: { layers, faults } } });
  expect(created.status()).toBe(201);
  const { orderNo } = (await created.json()) as { orderNo: string };
  if (pay) {
    const paid = await page.request.post('/api/payments', {
      headers: { 'idempotency-key': `pay-${orderNo}` },
      data: { orderNo, amountCents: 4_200 },
    });
    expect(paid.status()).toBe(201);
  }
  return orderNo;
}

test.describe('the refund form', () => {
  test('a paid order’s "Refund…" opens a form with its own id; $5.00 is refunded once, whatever is resubmitted', async ({
    page,
  }) => {
    const orderNo = await orderOfThisBrowser(page);
    const requestId = await openRefund(page, orderNo);
    await expect(page.getByTestId('refund-request-id')).toHaveText(requestId);
    await expect(page.getByTestId('refund-left')).toHaveText('Left to refund: $42.00');

    // (a) The first submit refunds, and the statement beside it shows the refund.
    await refund(page, '5.00');
    const outcome = page.getByRole('status');
    await expect(outcome).toContainText(/Refunded\. \$5\.00 was refunded to the card \(refund re_[0-9a-f]+\)\./);
    await expect(outcome).toContainText('Answered by the bank');
    await expect(page.getByTestId('refund-count')).toHaveText('Refunded once.');
    await expect(page.getByTestId('refund-left')).toHaveText('Left to refund: $37.00');

    // The same form submitted again: the same refund.
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    await expect(outcome).toContainText('This is this refund’s first result', { timeout: 15_000 });

    // (b) Reloaded (the id is in the address, the draft in the database): still the same refund.
    await page.reload();
    await refund(page, '5.00');
    await expect(outcome).toHaveAttribute('data-answer', 'first_result');
    await expect(outcome).toContainText(
      /\$5\.00 was refunded to the card \(refund re_[0-9a-f]+\)\. This is this refund’s first result/,
    );
    await expect(outcome).toContainText('Answered by layer 2, request key');
    await expect(page.getByTestId('refund-count')).toHaveText('Refunded once.');
    expect(await refundsOf(page, orderNo)).toEqual({ amounts: [500], refundedCents: 500 });

    // (c) "New refund": a new intent, a new id, a second refund.
    await page.getByRole('button', { name: 'New refund' }).click();
    await expect(page).not.toHaveURL(new RegExp(`${requestId}$`));
    await expect(page).toHaveURL(new RegExp(`/checkout/${orderNo}/refunds/rq_[A-Za-z0-9_-]{16}$`));
    await refund(page, '5.00');
    await expect(outcome).toHaveAttribute('data-answer', 'refunded');
    await expect(page.getByTestId('refund-count')).toHaveText('Refunded 2 times.');
    await expect(page.getByTestId('refunds').getByRole('row')).toHaveCount(3); // the header and two refunds
    expect(await refundsOf(page, orderNo)).toEqual({ amounts: [500, 500], refundedCents: 1_000 });

    // The checkout shows them too.
    await page.getByRole('link', { name: 'Back to the checkout of this order' }).click();
    await expect(page.getByTestId('refunds-section').getByTestId('refund-count')).toHaveText('Refunded 2 times.');
    await expect(page.getByTestId('refunds-section').getByTestId('refund-left')).toHaveText('Left to refund: $32.00');
  });

  test('(d) more than is left: the ledger says how much is left, and nothing is refunded', async ({ page }) => {
    const orderNo = await orderOfThisBrowser(page);
    await openRefund(page, orderNo);
    await refund(page, '30');
    await expect(page.getByRole('status')).toHaveAttribute('data-answer', 'refunded');
    await page.getByRole('button', { name: 'New refund' }).click();
    await expect(page.getByRole('status')).toHaveAttribute('data-answer', 'idle');
    await refund(page, '20.00');
    const outcome = page.getByRole('status');
    await expect(outcome).toHaveAttribute('data-answer', 'exceeds');
    await expect(outcome).toContainText('More than is left to refund. Only $12.00 is left to refund on this order.');
    await expect(outcome).toContainText('Nothing was refunded.');
    await expect(page.getByTestId('refund-count')).toHaveText('Refunded once.');
    expect(await refundsOf(page, orderNo)).toEqual({ amounts: [3_000], refundedCents: 3_000 });
  });

  // Layer 0 as the Pay button has it: on, a double click sends one request; off, two (one refund all the same:
  // both carry the form's id, and the request key answers the second with the first's result).
  for (const pendingUi of [true, false]) {
    test(`a double click with the pending UI ${pendingUi ? 'on sends one request' : 'off sends two'}, and refunds once`, async ({
      page,
    }) => {
      const orderNo = await orderOfThisBrowser(page, {
        layers: { ...ALL_ON, pendingUi },
        faults: { bankLatencyMs: 600 },
      });
      const requestId = await openRefund(page, orderNo);
      let posts = 0;
      page.on('request', (sent) => {
        if (sent.method() === 'POST' && sent.url().endsWith(`/refunds/${requestId}`)) posts++;
      });
      await page.getByLabel('Amount to refund, in US dollars').fill('5.00');
      await page.getByRole('button', { name: 'Refund', exact: true }).dblclick();
      const outcome = page.getByRole('status');
      await expect(outcome).toHaveAttribute('data-answer', 'pending');
      if (pendingUi)
        await expect(page.getByRole('button', { name: /^Refund/ })).toHaveAttribute('aria-disabled', 'true');
      await expect(outcome).toHaveAttribute('data-answer', pendingUi ? 'refunded' : 'first_result', {
        timeout: 15_000,
      });
      await expect(outcome).toContainText('$5.00 was refunded to the card');
      await expect(page.getByTestId('refund-count')).toHaveText('Refunded once.');
      expect(posts).toBe(pendingUi ? 1 : 2);
      expect(await refundsOf(page, orderNo)).toEqual({ amounts: [500], refundedCents: 500 });
    });
  }

  test('an amount that is not one is refused in the field, and nothing is sent', async ({ page }) => {
    const orderNo = await orderOfThisBrowser(page);
    await openRefund(page, orderNo);
    const field = page.getByLabel('Amount to refund, in US dollars');
    await field.fill('5.001');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    await expect(field).toHaveAttribute('aria-invalid', 'true');
    await expect(field).toHaveAccessibleDescription(
      /Enter an amount greater than 0 in dollars, with at most 2 decimals/,
    );
    await expect(page.getByRole('status')).toHaveAttribute('data-answer', 'idle');
    expect(await refundsOf(page, orderNo)).toEqual({ amounts: [], refundedCents: 0 });
  });

  test('(e) an unpaid order has no Refunds section; it appears once the order is paid', async ({ page }) => {
    const orderNo = await orderOfThisBrowser(page, { pay: false });
    await page.goto(`/checkout/${orderNo}`);
    await expect(page.getByRole('button', { name: /^Pay/ })).toBeVisible();
    await expect(page.getByRole('heading', { name: 'Refunds' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Refund…' })).toHaveCount(0);
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect(page.getByRole('status')).toContainText('Payment successful', { timeout: 15_000 });
    await expect(page.getByRole('heading', { name: 'Refunds' })).toBeVisible();
    await expect(page.getByTestId('refunds-section').getByTestId('refund-left')).toHaveText('Left to refund: $42.00');
  });

  test('a refund form is its order’s, and its session’s: another order’s id or another browser gets not found', async ({
    page,
    browser,
  }) => {
    const orderNo = await orderOfThisBrowser(page);
    const requestId = await openRefund(page, orderNo);
    const other = await orderOfThisBrowser(page);
    expect((await page.goto(`/checkout/${other}/refunds/${requestId}`))?.status()).toBe(404);
    expect((await page.goto(`/checkout/${orderNo}/refunds/rq_AAAAAAAAAAAAAAAA`))?.status()).toBe(404);
    const stranger = await browser.newContext();
    try {
      const strangerPage = await stranger.newPage();
      expect((await strangerPage.goto(`/checkout/${orderNo}/refunds/${requestId}`))?.status()).toBe(404);
    } finally {
      await stranger.close();
    }
  });

  test('(f) axe finds no serious or critical violation on the refund form, before and after a refund', async ({
    page,
  }) => {
    const orderNo = await orderOfThisBrowser(page);
    await openRefund(page, orderNo);
    const serious = async () => {
      const results = await new AxeBuilder({ page }).analyze();
      return results.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
    };
    expect(await serious()).toEqual([]);
    await refund(page, '5.00');
    await expect(page.getByTestId('refund-count')).toHaveText('Refunded once.');
    expect(await serious()).toEqual([]);
  });
});

// `npm run test:deep`'s (e2e/tiers.ts): npm test checks the checkout in Chinese.
test.describe('the refund form in Chinese', { tag: DEEP_TAG }, () => {
  test.use({ locale: 'zh-CN' });

  test('(g) has no English left, before and after a refund, says it in the article’s words, and axe passes', async ({
    page,
  }) => {
    const orderNo = await orderOfThisBrowser(page);
    await openRefund(page, orderNo);
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('退款');
    await expect(page.getByTestId('refund-left')).toHaveText('剩余可退：US$42.00');
    expect(await englishLeft(page)).toEqual([]);
    await page.getByLabel('退款金额（美元）').fill('5.00');
    await page.getByRole('button', { name: '退款', exact: true }).click();
    const outcome = page.getByRole('status');
    await expect(outcome).toContainText(/退款成功。已向银行卡退回 US\$5\.00（退款 re_[0-9a-f]+）。/, {
      timeout: 15_000,
    });
    await expect(outcome).toContainText('响应方：银行');
    await expect(page.getByTestId('refund-count')).toHaveText('已退款一次。');
    await expect(page.getByTestId('refund-left')).toHaveText('剩余可退：US$37.00');
    expect(await englishLeft(page)).toEqual([]);
    // axe in Chinese, every violation (as e2e/i18n.spec.ts holds each page in Chinese).
    const results = await new AxeBuilder({ page }).analyze();
    expect(results.violations.map((v) => `${v.id} (${v.impact}): ${v.help} (${v.nodes.length})`)).toEqual([]);
    // The checkout's Refunds section, in Chinese too.
    await page.goto(`/checkout/${orderNo}`);
    await expect(page.getByRole('button', { name: '退款…' })).toBeVisible();
    expect(await englishLeft(page)).toEqual([]);
  });
});
