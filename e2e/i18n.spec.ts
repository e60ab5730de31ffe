// 中文: every page renders in Chinese for a browser that asks for it, the switcher changes the language in place
// and keeps it across a reload, and axe passes in Chinese as in English (each page's own spec checks English).
import AxeBuilder from '@axe-core/playwright';
import { PROBLEM_TYPES } from '../lib/http/problem-types';
import { expect, test } from './fixtures';
import { englishLeft } from './i18n';

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

test.describe('in Chinese', () => {
  test.use({ locale: 'zh-CN' });

  for (const { name, path } of PAGES) {
    test(`the ${name} page has no English left, and axe passes`, async ({ page }) => {
      await page.goto(path);
      await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
      await expect(page.locator('h1')).toBeVisible();
      expect(await englishLeft(page)).toEqual([]);
      const results = await new AxeBuilder({ page }).analyze();
      expect(results.violations.map((v) => `${v.id} (${v.impact}): ${v.help} (${v.nodes.length})`)).toEqual([]);
    });
  }

  test('every problem type’s page has no English left (axe: the two above)', async ({ page }) => {
    for (const type of Object.keys(PROBLEM_TYPES)) {
      await page.goto(`/problems/${type}`);
      await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
      expect(await englishLeft(page), type).toEqual([]);
    }
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
