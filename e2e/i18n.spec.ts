// 中文: every page renders in Chinese for a browser that asks for it, the switcher changes the language in place
// and keeps it across a reload, and axe passes in Chinese as in English (each page's own spec checks English).
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { ALL_OFF, ALL_ON, chargeCount, createOrder, expect, test, waitForAnswer } from './fixtures';
import { englishLeft } from './i18n';
import { DEEP_TAG } from './tiers';

/** No English left in what the page shows, and axe passes. */
async function expectChinese(page: Page): Promise<void> {
  expect(await englishLeft(page)).toEqual([]);
  const results = await new AxeBuilder({ page }).analyze();
  expect(results.violations.map((v) => `${v.id} (${v.impact}): ${v.help} (${v.nodes.length})`)).toEqual([]);
}

/** Pages to render in Chinese: each area adds its own (the checkout, the lab and the scenarios have theirs). */
const PAGES: Array<{ name: string; path: string }> = [
  { name: 'home', path: '/' },
  { name: 'glossary', path: '/glossary' },
  { name: 'scenarios', path: '/scenarios' },
  { name: 'problem types', path: '/problems' },
  { name: 'idempotency-key problem', path: '/problems/idempotency-key' },
  { name: 'presenter-only problem', path: '/problems/presenter-only' },
  { name: 'API reference (generated, marked English)', path: '/api/docs' },
  { name: 'not found', path: '/no-such-page' },
  { name: 'too many requests', path: '/limited?seconds=30' },
];

/** The checkout's form has its answer, and no second submit is on its way. */
async function settled(page: Page): Promise<void> {
  await waitForAnswer(page);
  await expect(page.locator('form.pay-form')).toHaveAttribute('aria-busy', 'false', { timeout: 20_000 });
}

test.describe('in Chinese', () => {
  test.use({ locale: 'zh-CN' });

  for (const { name, path } of PAGES) {
    test(`the ${name} page has no English left, and axe passes`, { tag: DEEP_TAG }, async ({ page }) => {
      await page.goto(path);
      await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
      await expect(page.locator('h1')).toBeVisible();
      await expectChinese(page);
    });
  }

  test('the checkout page has no English left, before and after paying, and axe passes', async ({ page, request }) => {
    // A fault on, so that the fault chips show too; the lab link, the chips, the statement, the outcome.
    const orderNo = await createOrder(request, { layers: ALL_ON, faults: { bankLatencyMs: 300 } });
    await page.goto(`/checkout/${orderNo}`);
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('收银台');
    await expect(page.getByRole('button', { name: '支付 US$42.00' })).toBeVisible();
    await expect(page.getByRole('list', { name: '实验室为这个订单注入的故障' })).toContainText('银行延迟 300 毫秒');
    await expectChinese(page);
    await page.getByRole('button', { name: /^支付/ }).click();
    await settled(page);
    await expect(page.getByRole('status')).toContainText('支付成功。你的卡已扣款 US$42.00');
    await expect(page.getByRole('status')).toContainText('响应方：银行');
    await expect(page.getByTestId('charge-count')).toHaveText('已扣款一次。');
    await expect(page.getByTestId('order-status')).toHaveText('已支付');
    await expectChinese(page);
  });

  test('a double click with every defence off reads, in Chinese, as two charges on the statement', async ({
    page,
    request,
  }) => {
    // Workshop exercise 1: every defence off and a slow bank (its preset), so the second click is sent too.
    const orderNo = await createOrder(request, { layers: ALL_OFF, faults: { bankLatencyMs: 1_500 } });
    await page.goto(`/checkout/${orderNo}`);
    const outcome = page.getByRole('status');
    await page.getByRole('button', { name: /^支付/ }).dblclick();
    await expect(outcome).toContainText('支付中…');
    await expect(page.getByTestId('charge-count')).toHaveText('一个订单被扣款 2 次！', { timeout: 15_000 });
    await settled(page);
    // The second request was told "paid" (the scenarios read that); the words say first that it charged twice.
    await expect(outcome).toHaveAttribute('data-answer', 'paid');
    await expect(outcome.locator('strong')).toHaveText('一个订单被扣款 2 次！');
    await expect(outcome).toContainText('你的卡被扣了 2 次 US$42.00');
    await expect(page.getByTestId('pay-charges')).toHaveText('银行卡账单：一个订单被扣款 2 次！');
    await expect(page.getByRole('region', { name: '订单状态' })).toContainText('已支付，并且被扣款 2 次');
    await expect(page.getByRole('region', { name: '银行卡账单' }).getByRole('row')).toHaveCount(3); // a header, 2 charges
    expect(await chargeCount(orderNo)).toBe(2);
    expect(await englishLeft(page)).toEqual([]);
  });

  test('the lab, with lanes on its timeline and every folded setting open, has no English left, and axe passes', {
    tag: DEEP_TAG,
  }, async ({ page }) => {
    await page.goto('/lab'); // this browser's session: the lanes of its payments show in its lab
    const orderNo = await createOrder(page.request, { layers: ALL_ON });
    const pay = (key: string) =>
      page.request.post('/api/payments', {
        headers: { 'idempotency-key': key },
        data: { orderNo, amountCents: 4_200 },
      });
    // Paid; the same key again (layer 2 replays the outcome); another key (layer 3 finds the order PAID).
    expect((await pay(`zh-${orderNo}`)).status()).toBe(201);
    await pay(`zh-${orderNo}`);
    await pay(`zh-again-${orderNo}`);
    await page.goto(`/lab?order=${orderNo}`);
    const lanes = page.locator(`li.lane[data-order-no="${orderNo}"][data-channel="api"]`);
    await expect(lanes).toHaveCount(3);
    const replayed = lanes.and(page.locator('[data-ends-at="requestKey"]'));
    const stopped = lanes.and(page.locator('[data-ends-at="stateMachine"]'));
    // Why each ended, in Chinese; the raw decisions stay in the data attributes.
    await expect(replayed.locator('[data-end]')).toHaveAttribute('data-decision', 'stopped');
    await expect(replayed.locator('[data-end]')).toContainText('在这里被第 2 层拦下');
    await expect(replayed.locator('[data-end]')).toContainText('返回了保存的结果（PAID）');
    await expect(stopped.locator('[data-end]')).toContainText('影响 0 行：订单已经是 PAID');
    await expect(lanes.and(page.locator('[data-ends-at="bank"]')).locator('[data-consequence]')).toContainText(
      '2 幂等键 已完成：结果已保存 24 小时',
    );
    for (const summary of await page.locator('summary').all()) await summary.click();
    await expectChinese(page);

    // An exercise's title, and the faults it rigs, in Chinese too.
    await page.getByLabel('练习', { exact: true }).selectOption('11b');
    await page.getByRole('button', { name: '设置练习 11b' }).click();
    await expect(page.getByText('当前设置：练习 11b，标记会失效：迟到的扣款')).toBeVisible();
    await expect(page.locator('summary', { hasText: '更多故障' })).toContainText('迟到的扣款');
    expect(await englishLeft(page)).toEqual([]);
  });

  test('the room has no English left, and axe passes', { tag: DEEP_TAG }, async ({ page }) => {
    await page.goto('/lab/room'); // on loopback, open to the presenter at the keyboard
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('全场视图');
    await expect(page.getByRole('heading', { name: '此刻' })).toBeVisible();
    await expectChinese(page);
  });
});

test('the switch changes the language in place, and the choice survives a reload', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('A checkout that cannot charge a card twice');
  await page.getByLabel('Language').selectOption('zh-CN');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('一个不会重复扣款的收银台');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await page.reload();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('一个不会重复扣款的收银台');
  await page.getByLabel('语言').selectOption('en');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('A checkout that cannot charge a card twice');
});
