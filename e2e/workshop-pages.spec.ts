// The workshop's served pages (issue 29, "What a teacher needs beyond the guide"): the guide at the room's own
// address, the handout with the answers left out and a print stylesheet, the facilitator's plan, and the opening
// slides, keyboard-driven and printable; in English and Chinese; axe finds nothing on any.
import AxeBuilder from '@axe-core/playwright';
import { type Audience, EXERCISES, sectionOf } from '../lib/lab/exercises';
import { expect, test } from './fixtures';
import { DEEP_TAG } from './tiers';

/** How many of the guide's sections (exercise 11 is one, for 11A and 11B) are played by this audience. */
const sections = (audience: Audience) =>
  new Set(EXERCISES.filter((exercise) => exercise.audience === audience).map((exercise) => sectionOf(exercise.id)))
    .size;

const PAGES = ['/workshop', '/workshop/handout', '/workshop/facilitator', '/workshop/slides'];

for (const locale of ['en-US', 'zh-CN'] as const) {
  // In Chinese, `npm run test:deep`'s (e2e/tiers.ts).
  const tag = locale === 'zh-CN' ? [DEEP_TAG] : [];
  test.describe(`the workshop's pages (${locale})`, { tag }, () => {
    test.use({ locale });

    // One test per page: axe on the long guide and three more pages took one test past its minute beside a second
    // test run.
    for (const path of PAGES) {
      test(`${path} is served, its links this app’s own, and axe finds nothing (in English)`, async ({ page }) => {
        const response = await page.goto(path);
        expect(response?.status(), path).toBe(200);
        const hrefs = await page.locator('main a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
        expect(
          hrefs.filter((href) => href?.includes('localhost:3000')),
          path,
        ).toEqual([]);
        // axe in English only: the Chinese pages are the same markup (axe is the slow part of this test).
        if (locale === 'zh-CN') return;
        const results = await new AxeBuilder({ page }).analyze();
        expect(results.violations.map((v) => `${path}: ${v.id} (${v.nodes.length})`)).toEqual([]);
      });
    }

    test('the guide opens each exercise’s lab at this address and says who plays each exercise', async ({ page }) => {
      await page.goto('/workshop');
      await expect(page.locator('main a[href="/lab?exercise=11a"]')).toHaveCount(1);
      const presenter = locale === 'en-US' ? /^The presenter shows this one/ : /^由讲师演示/;
      const browser = locale === 'en-US' ? /^Attendees: in your browser/ : /^学员：在你的浏览器里/;
      await expect(page.locator('main h2 + p em').filter({ hasText: presenter })).toHaveCount(sections('presenter'));
      await expect(page.locator('main h2 + p em').filter({ hasText: browser })).toHaveCount(sections('browser'));
    });

    test('the handout keeps each prediction and its steps, leaves the answers out, and prints without the site', async ({
      page,
    }) => {
      await page.goto('/workshop/handout');
      const main = page.locator('main');
      const [predict, watch, answer] =
        locale === 'en-US'
          ? ['Predict.', /^Watch\b/, 'Charged 2 times for one order']
          : ['预测。', /^观察/, '一个订单被扣款 2 次'];
      await expect(main.getByText(predict, { exact: false }).first()).toBeVisible();
      expect(await main.locator('.handout-answer').count()).toBeGreaterThanOrEqual(12);
      await expect(main.locator('a[href="/lab?exercise=1"]')).toHaveCount(1);
      await expect(main).not.toContainText(answer);
      // What each step shows is left out: a "Watch" paragraph is its label alone, with room to write.
      const watches = await main.locator('p', { has: page.locator('strong', { hasText: watch }) }).allTextContents();
      expect(watches.length).toBeGreaterThanOrEqual(15);
      expect(watches.filter((text) => !/^\s*(Watch|观察)[^.。]*[.。]\s*$/.test(text))).toEqual([]);
      await page.emulateMedia({ media: 'print' });
      await expect(page.locator('.site-header')).toBeHidden();
      await expect(page.locator('.workshop-nav')).toBeHidden();
    });

    test('the slides move with the keyboard, keep their number in the address, and print one a page', async ({
      page,
    }) => {
      await page.goto('/workshop/slides');
      const shown = page.locator('section.slide:visible');
      await expect(shown).toHaveCount(1);
      await expect(shown).toHaveAttribute('data-slide', '1');
      await expect(shown).toContainText(/http:\/\/(localhost|127\.0\.0\.1):\d+/); // the room's address
      // The deck hears the keyboard once hydrated: a key pressed before that moves nothing, so it is pressed again
      // (while the first slide is still shown: never past the second).
      await expect(async () => {
        if ((await shown.getAttribute('data-slide')) === '1') await page.keyboard.press('ArrowRight');
        await expect(page.locator('section.slide:visible')).toHaveAttribute('data-slide', '2', { timeout: 1_000 });
      }).toPass({ timeout: 20_000 });
      await page.keyboard.press('End');
      await expect(page.locator('section.slide:visible')).toHaveAttribute('data-slide', '7');
      await expect(page).toHaveURL(/#7$/);
      await page.reload();
      await expect(page.locator('section.slide:visible')).toHaveAttribute('data-slide', '7');
      await page.keyboard.press('Home');
      await expect(page.locator('section.slide:visible')).toHaveAttribute('data-slide', '1');
      await page.emulateMedia({ media: 'print' });
      await expect(page.locator('section.slide:visible')).toHaveCount(7);
    });
  });
}

test('the room’s view links the facilitator’s plan, the handout and the slides', async ({ page }) => {
  await page.goto('/lab/room'); // on loopback, everyone is the presenter
  for (const href of ['/workshop', '/workshop/handout', '/workshop/facilitator', '/workshop/slides']) {
    await expect(page.locator(`main a[href="${href}"]`).first()).toBeVisible();
  }
});
