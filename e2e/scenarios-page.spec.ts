// The /scenarios page as a room sees it on a projector (1366×768) and as an attendee sees it on a phone: the
// matrices keep their column headers and scenario names in view while they scroll, every term of a cell is
// defined, and every row says how to reproduce it and where to play it in the lab.
import AxeBuilder from '@axe-core/playwright';
import { devices, type Locator, type Page } from '@playwright/test';
import { exercisesOf } from '../lib/lab/exercises';
import { expect, test } from './fixtures';
import { KEY_STRATEGY_ROWS, rowCommand, SCENARIOS } from './scenarios/matrix';

const PROOF = 'Which defence stops which duplicate';
const KEYS = 'Key strategies: what layer 2’s key is made of';

/** A box, in the page's viewport coordinates. */
async function box(locator: Locator) {
  const found = await locator.boundingBox();
  if (!found) throw new Error(`${locator} has no box`);
  return found;
}

/** The matrix's scroll container, scrolled (instantly) as far as it goes along one axis. */
async function scrollToEnd(page: Page, name: string, axis: 'down' | 'right'): Promise<Locator> {
  const region = page.getByRole('region', { name });
  await region.scrollIntoViewIfNeeded();
  const scrolled = await region.evaluate((element, down) => {
    if (down) element.scrollTop = element.scrollHeight;
    else element.scrollLeft = element.scrollWidth;
    return down ? element.scrollTop : element.scrollLeft;
  }, axis === 'down');
  // Else there is nothing to prove: the table fits its box.
  expect(scrolled, `the ${name} table scrolls ${axis}`).toBeGreaterThan(100);
  return region;
}

test.describe('/scenarios on a projector', () => {
  test.use({ viewport: { width: 1366, height: 768 } });

  test('the column headers and the scenario names stay in view while the matrix scrolls', async ({ page }) => {
    await page.goto('/scenarios');
    const region = await scrollToEnd(page, PROOF, 'down');
    const scroller = await box(region);
    // Every header cell (a row's box stays where the row was laid out; its sticky cells are what move): inside the
    // scroller's box and on the screen, though the rows under them moved up by far more than their height.
    for (const cell of await region.getByRole('columnheader').all()) {
      const header = await box(cell);
      expect(header.y).toBeGreaterThanOrEqual(scroller.y);
      expect(header.y + header.height).toBeLessThanOrEqual(scroller.y + scroller.height);
      expect(header.y).toBeGreaterThanOrEqual(0);
      expect(header.y + header.height).toBeLessThanOrEqual(768);
    }
    // The last row is what is in view now, its name beside it.
    await expect(region.locator('tbody tr').last().getByRole('rowheader')).toBeInViewport();
  });

  test('a legend defines every term of a cell, and each row says how to reproduce it', async ({ page }) => {
    await page.goto('/scenarios');
    const legend = page.getByRole('region', { name: 'How to read the tables' });
    const terms = legend.getByRole('term');
    await expect(terms).toHaveText([
      '1 charge',
      '2 charges, 3, 20…',
      '0 charges',
      'receipts',
      'paid',
      'first outcome',
      'already submitted',
      'in progress',
      'error',
      'in progress, then paid',
      'in progress, then first outcome',
      'learned the charge',
      'gave up after 6 requests, never told of the charge',
      '1 refund',
      'got $… back, as owed',
      'got $… back, owed $…',
      'declared: …',
      '·',
      'source',
      'npm run scenarios -- -g "@…"',
    ]);
    // Whatever the shown run holds, what a cell says the customer saw is one of the terms.
    const seen = await page.locator('tbody td > span:first-of-type').allTextContents();
    expect(seen.length).toBeGreaterThan(0);
    const defined = await terms.allTextContents();
    // A refund cell's amounts are the row's own: the legend names them "$…".
    const shown = seen.map((sees) => sees.replace(/\$[\d,]+\.\d{2}/g, '$…'));
    expect(shown.filter((sees) => !defined.includes(sees))).toEqual([]);

    // Each row: its command, and the exercises it belongs to, each a link that sets the lab up for it.
    for (const [name, ids] of [
      [PROOF, SCENARIOS.map((scenario) => scenario.id)],
      [KEYS, KEY_STRATEGY_ROWS.map((row) => row.scenario.id)],
    ] as const) {
      const table = page.getByRole('table', { name });
      await expect(table.locator('tbody th code')).toHaveText(ids.map(rowCommand));
      const links = await table
        .locator('tbody tr')
        .evaluateAll((rows) =>
          rows.map((row) => [...row.querySelectorAll('a')].map((a) => `${a.textContent} → ${a.getAttribute('href')}`)),
        );
      expect(links).toEqual(ids.map((id) => exercisesOf(id).map((e) => `Exercise ${e.id} → /lab?exercise=${e.id}`)));
    }
    await expect(page.getByRole('table', { name: PROOF }).getByRole('row', { name: /Stalled payment/ })).toContainText(
      'Set up in the lab: Exercise 3, Exercise 12',
    );
  });
});

test.describe('/scenarios on a phone', () => {
  // Pixel 7's screen, touch and user agent; its browser type is the project's (a describe cannot change it).
  const { defaultBrowserType: _, ...pixel7 } = devices['Pixel 7'];
  test.use(pixel7);

  test('the page never scrolls sideways; the matrix does, its scenario names staying put', async ({ page }) => {
    await page.goto('/scenarios');
    // A phone zooms out to fit a page that is too wide, and innerWidth grows with it (seen: 1140): compare both
    // with the screen's width, the layout viewport.
    const widths = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      screen: document.documentElement.clientWidth,
    }));
    expect(widths.screen).toBe(pixel7.viewport.width);
    expect(Math.max(widths.page, widths.innerWidth), JSON.stringify(widths)).toBeLessThanOrEqual(widths.screen);

    const region = await scrollToEnd(page, PROOF, 'right');
    const scroller = await box(region);
    const name = await box(region.locator('tbody th').first());
    expect(name.x).toBeGreaterThanOrEqual(scroller.x);
    expect(name.x + name.width).toBeLessThanOrEqual(scroller.x + scroller.width);
    expect(name.x).toBeGreaterThanOrEqual(0);

    const results = await new AxeBuilder({ page }).analyze();
    expect(results.violations.map((v) => `${v.id} (${v.impact}): ${v.help} (${v.nodes.length})`)).toEqual([]);
  });
});
