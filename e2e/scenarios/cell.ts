// Runs one scenario under every configuration of the matrix: a fresh order per cell (so every cell runs
// in parallel with the others), the card network's count at the end, and the cell recorded for the
// matrix reporter. The assertion is the declared cell: a difference either way fails.
import type { APIRequestContext, Browser, BrowserContext, Locator, Page, TestInfo } from '@playwright/test';
import { Redis } from 'ioredis';
import { chargeCount, createOrder, expect, receiptCount, test, waitForAnswer } from '../fixtures';
import { DEEP_TAG } from '../tiers';
import {
  type Charges,
  CONFIGURATIONS,
  chargesBucket,
  DATABASE_FAILOVER_ROWS,
  expectedCell,
  expectedKeyCell,
  FULL_MATRIX_TAG,
  KEY_STRATEGIES,
  KEY_STRATEGY_COLUMNS,
  KEY_STRATEGY_LAYERS,
  KEY_STRATEGY_ROWS,
  KEY_STRATEGY_TAG,
  type KeyStrategy,
  type KeyStrategyRow,
  type Layers,
  rowTag,
  SAMPLED_CONFIGURATIONS,
  SCENARIOS,
  type Scenario,
  type Sees,
} from './matrix';

export type CellContext = {
  orderNo: string;
  db: import('pg').Pool;
  layers: Layers;
  page: Page;
  context: BrowserContext;
  browser: Browser;
  request: APIRequestContext;
};

export function scenario(id: string, run: (cell: CellContext) => Promise<Sees>): void {
  const declared = SCENARIOS.find((s) => s.id === id);
  if (!declared) throw new Error(`scenario ${id} is not declared in matrix.ts`);
  if (declared.oneRun) throw new Error(`scenario ${id} runs its cells in one test: scenarioInOneRun()`);
  const keyRow = KEY_STRATEGY_ROWS.find((row) => row.scenario.id === id);
  // Tagged with its id: `npm run scenarios -- -g "@<id>"` runs this row and nothing else.
  test.describe(`scenario: ${declared.title}`, { tag: rowTag(declared.id) }, () => {
    for (const configuration of CONFIGURATIONS) {
      // Layer 2 alone with business keys is the key-strategy matrix's first column too: one run, two cells.
      const alsoKeyCell = keyRow && configuration.id === 'request-key' ? keyRow : undefined;
      const tag = SAMPLED_CONFIGURATIONS.includes(configuration.id) ? [] : [FULL_MATRIX_TAG];
      test(configuration.title, { tag }, async ({ page, context, browser, request, db }, testInfo) => {
        const fixtures = { page, context, browser, request, db };
        const expected = expectedCell(declared, configuration.layers);
        const actual = await runCell(declared, configuration.layers, 'business', run, fixtures);
        annotateCell(testInfo, declared, configuration.id, expected, actual);
        if (alsoKeyCell) annotateKeyCell(testInfo, alsoKeyCell, 'business', actual);
        expect(outcomeOf(actual), `${declared.title} / ${configuration.title}`).toEqual(outcomeOf(expected));
      });
    }
    // Layer 2 alone under the two wrong keys, on the proof matrix's rows: `npm run test:deep` (e2e/tiers.ts); npm
    // test sees a key of each wrong kind miss in the client-resend row and in workshop exercise 12.
    if (keyRow) keyStrategyCells(keyRow, run, ['paramHash', 'perSubmit'], [DEEP_TAG]);
  });
}

/** One run's cell: the order of a configuration, and what the customer (or calling service) saw at the end. */
export type RunCell = { configuration: string; orderNo: string; sees: Sees };

/**
 * A scenario whose cells share one run (`oneRun` in matrix.ts): one test plays the event against an order per
 * configuration at once, each with the lab settings `labOf` gives (the scenario's, and the configuration's
 * defences). Each cell is counted, recorded and held to its declaration on its own; the test fails if any
 * cell differs, and says which.
 */
export function scenarioInOneRun(
  id: string,
  title: string,
  run: (
    // No browser: a row run once is played through the API (a page would cost a browser for nothing).
    fixtures: Pick<CellContext, 'request' | 'db'>,
    labOf: (layers: Layers) => Parameters<typeof createOrder>[1],
  ) => Promise<RunCell[]>,
): void {
  // A row of the proof matrix, or of the database-failover matrix (its cells are recorded for that table).
  const failoverRow = DATABASE_FAILOVER_ROWS.find((s) => s.id === id);
  const declared = failoverRow ?? SCENARIOS.find((s) => s.id === id);
  if (!declared?.oneRun) throw new Error(`scenario ${id} is not declared in matrix.ts as run once for its row`);
  const cellType = failoverRow ? 'db-failover-cell' : 'matrix-cell';
  test.describe(`scenario: ${declared.title}`, { tag: rowTag(declared.id) }, () => {
    test(title, async ({ request, db }, testInfo) => {
      // A whole row in one run (a Redis failover, its own servers and app): a guard against a hang, sized for a
      // machine busy with another suite.
      test.setTimeout(300_000);
      const labOf = (layers: Layers) => ({
        layers,
        faults: { bankLatencyMs: declared.bankLatencyMs, ...declared.lab?.faults },
        claims: declared.lab?.claims,
      });
      const cells = await run({ request, db }, labOf);
      const count = declared.counts === 'receipts' ? receiptCount : chargeCount;
      const counts = await Promise.all(cells.map((cell) => settledCount(cell.orderNo, count)));
      for (const configuration of CONFIGURATIONS) {
        const index = cells.findIndex((cell) => cell.configuration === configuration.id);
        const cell = cells[index];
        const chargeTotal = counts[index];
        expect(cell, `${declared.title}: no run for ${configuration.title}`).toBeDefined();
        if (!cell || chargeTotal === undefined) continue;
        const expected = expectedCell(declared, configuration.layers);
        const actual = { charges: chargesBucket(chargeTotal), sees: cell.sees, chargeCount: chargeTotal };
        annotateCell(testInfo, declared, configuration.id, expected, actual, cellType);
        expect.soft(outcomeOf(actual), `${declared.title} / ${configuration.title}`).toEqual(outcomeOf(expected));
      }
    });
  });
}

/** Records a cell for the matrix reporter (e2e/matrix-reporter.ts): a test may record several. */
function annotateCell(
  testInfo: TestInfo,
  declared: Scenario,
  configuration: string,
  expected: { charges: Charges; sees: Sees },
  actual: Actual,
  type: 'matrix-cell' | 'db-failover-cell' = 'matrix-cell',
): void {
  testInfo.annotations.push({
    type,
    description: JSON.stringify({
      scenario: declared.id,
      configuration,
      counts: declared.counts ?? 'charges',
      expected: { charges: expected.charges, sees: expected.sees },
      actual,
    }),
  });
}

/** The scenarios only the key-strategy matrix runs: every column. */
export function keyStrategyScenario(id: string, run: (cell: CellContext) => Promise<Sees>): void {
  const row = KEY_STRATEGY_ROWS.find((r) => r.scenario.id === id);
  if (!row) throw new Error(`scenario ${id} is not a row of the key-strategy matrix`);
  test.describe(`scenario: ${row.scenario.title}`, { tag: rowTag(row.scenario.id) }, () =>
    keyStrategyCells(row, run, KEY_STRATEGIES),
  );
}

function keyStrategyCells(
  row: KeyStrategyRow,
  run: (cell: CellContext) => Promise<Sees>,
  strategies: readonly KeyStrategy[],
  tags: string[] = [],
) {
  for (const strategy of strategies) {
    const column = KEY_STRATEGY_COLUMNS.find((c) => c.id === strategy);
    // `-g "@key-strategy"` runs these: the key-strategy matrix's cells that the proof matrix does not run.
    const title = `key strategy: ${column?.title ?? strategy}`;
    test(title, { tag: [KEY_STRATEGY_TAG, ...tags] }, async ({ page, context, browser, request, db }, testInfo) => {
      const fixtures = { page, context, browser, request, db };
      const actual = await runCell(row.scenario, KEY_STRATEGY_LAYERS, strategy, run, fixtures);
      annotateKeyCell(testInfo, row, strategy, actual);
      expect(outcomeOf(actual), `${row.scenario.title} / key: ${strategy}`).toEqual(
        outcomeOf(expectedKeyCell(row, strategy)),
      );
    });
  }
}

type Fixtures = Omit<CellContext, 'orderNo' | 'layers'>;
type Actual = { charges: Charges; sees: Sees; chargeCount: number };

/** One cell: a fresh order with the cell's settings, the scenario, and the count once it has settled. */
async function runCell(
  declared: Scenario,
  layers: Layers,
  strategy: KeyStrategy,
  run: (cell: CellContext) => Promise<Sees>,
  fixtures: Fixtures,
): Promise<Actual> {
  const orderNo = await createOrder(fixtures.request, {
    layers,
    faults: { bankLatencyMs: declared.bankLatencyMs, ...declared.lab?.faults },
    claims: declared.lab?.claims,
    keys: strategy === 'business' ? undefined : { strategy },
  });
  const sees = await run({ ...fixtures, orderNo, layers });
  const count = await settledCount(orderNo, declared.counts === 'receipts' ? receiptCount : chargeCount);
  return { charges: chargesBucket(count), sees, chargeCount: count };
}

function annotateKeyCell(testInfo: TestInfo, row: KeyStrategyRow, strategy: KeyStrategy, actual: Actual): void {
  const expected = expectedKeyCell(row, strategy);
  testInfo.annotations.push({
    type: 'key-strategy-cell',
    description: JSON.stringify({
      scenario: row.scenario.id,
      configuration: strategy,
      counts: 'charges',
      expected: { charges: expected.charges, sees: expected.sees },
      actual,
    }),
  });
}

const outcomeOf = (cell: { charges: Charges; sees: Sees }) => ({ charges: cell.charges, sees: cell.sees });

/** The count once it has stopped moving (a duplicate may still be on its way to the bank, or the queue). */
export async function settledCount(orderNo: string, count: (orderNo: string) => Promise<number>): Promise<number> {
  let last = await count(orderNo);
  let stableSince = Date.now();
  const deadline = Date.now() + 8_000;
  while (Date.now() - stableSince < 500 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const now = await count(orderNo);
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    }
  }
  return last;
}

/** The outcome region's message as a category, once the form has finished (queued submits included). */
export async function seesOn(page: Page): Promise<Sees> {
  const outcome = page.getByRole('status');
  const form = page.locator('form.pay-form');
  const errorHeading = page.getByRole('heading', { name: 'Something went wrong' });
  await expect(outcome.or(errorHeading).first()).toBeVisible();
  if (await errorHeading.isVisible()) return 'error';
  await waitForAnswer(page);
  if (await errorHeading.isVisible()) return 'error';
  // Settled: not busy, and still not busy a moment later (a queued second submit starts right after).
  for (let calm = 0; calm < 2; ) {
    await expect(form).toHaveAttribute('aria-busy', 'false', { timeout: 20_000 });
    await page.waitForTimeout(150);
    calm = (await form.getAttribute('aria-busy')) === 'false' ? calm + 1 : 0;
  }
  return categorize((await outcome.getAttribute('data-answer')) ?? '', (await outcome.textContent()) ?? '');
}

/**
 * What the request was answered (the outcome's data-answer, the action's state), as the matrix names it.
 * The words may say more than the answer (for example that the card was charged twice): the cell records
 * the answer, and the charges separately.
 */
export function categorize(answer: string, words: string): Sees {
  switch (answer) {
    case 'paid':
      return 'paid';
    case 'replayed':
      return words.includes('Card declined') ? 'error' : 'first outcome';
    case 'already_submitted':
      return 'already submitted';
    case 'in_progress':
      return 'in progress';
    default:
      return 'error';
  }
}

export type Answer = { status: number; headers: Record<string, string> };

/** One POST /api/payments of a service client: its key and its X-Client-Id. */
export async function payOnce(
  request: APIRequestContext,
  orderNo: string,
  caller: { key: string; client: string },
): Promise<Answer> {
  const response = await request.post('/api/payments', {
    headers: { 'idempotency-key': caller.key, 'x-client-id': caller.client },
    data: { orderNo, amountCents: 4200 },
    timeout: 30_000,
  });
  return { status: response.status(), headers: response.headers() };
}

/**
 * A well-behaved client's last answer: on 409 ("in progress") and 503 (a service is down or overloaded) it waits
 * as Retry-After says and asks again, with its key; a dropped connection (the client cannot know whether the
 * payment was made) it sends again too, with its key: what the key is for.
 */
export async function retryUntilFinal(
  request: APIRequestContext,
  orderNo: string,
  caller: { key: string; client: string },
  attempts = 15,
): Promise<Answer> {
  const once = () =>
    payOnce(request, orderNo, caller).catch((error: Error) => {
      if (!/ECONNRESET|socket hang up|ECONNREFUSED/.test(error.message)) throw error;
      return { status: 0, headers: { 'retry-after': '1' } } satisfies Answer;
    });
  let answer = await once();
  for (let attempt = 2; attempt <= attempts && [0, 409, 503].includes(answer.status); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after'] ?? '1') * 1000));
    answer = await once();
  }
  return answer;
}

/**
 * Keeps the bank slow for at least `ms` for this order's next payments (its own lab settings; at most 9 s, under
 * the bank's 10 s timeout): a scenario whose duplicate must arrive while the first payment is still at the bank
 * sizes the stall from what it measured on this machine now, not from a constant a busy machine outruns.
 */
export async function keepTheBankSlow(db: import('pg').Pool, orderNo: string, ms: number): Promise<void> {
  await db.query(
    `UPDATE orders SET lab = jsonb_set(lab, '{faults,bankLatencyMs}',
       to_jsonb(GREATEST(COALESCE((lab -> 'faults' ->> 'bankLatencyMs')::int, 0), $2::int)))
     WHERE order_no = $1`,
    [orderNo, Math.min(9_000, Math.round(ms))],
  );
}

export function categorizeAnswer(answer: Answer): Sees {
  return categorizeResponse(answer.status, answer.headers);
}

/** The API's answer as a category. */
export function categorizeResponse(status: number, headers: Record<string, string>): Sees {
  if (status === 201) return headers['idempotent-replayed'] === 'true' ? 'first outcome' : 'paid';
  if (status === 200) return 'first outcome';
  if (status === 409) return 'in progress';
  return 'error';
}

export async function openCheckout(page: Page, orderNo: string): Promise<Locator> {
  await page.goto(`/checkout/${orderNo}`);
  const button = page.getByRole('button', { name: /Pay/ });
  await expect(button).toBeVisible();
  return button;
}

/** The session id behind a browser context (its `sid` cookie is `<id>.<signature>`). */
export async function sessionOf(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === 'sid');
  if (!cookie) throw new Error('no session cookie');
  return cookie.value.split('.')[0] ?? '';
}

let redis: Redis | undefined;
/** The test's own Redis connection, to let a token run out of time without waiting five minutes. */
export function testRedis(): Redis {
  redis ??= new Redis(process.env.REDIS_URL ?? '');
  return redis;
}

/**
 * One cell of a detail's own matrix (the release rules', the answers'): recorded for the reporter under `type`,
 * then held to its declaration (the charges and what the client got; a difference either way fails).
 */
export function holdCell(
  testInfo: TestInfo,
  type: 'release-cell' | 'answer-cell' | 'refund-cell',
  cell: { row: { id: string; title: string }; column: { id: string; title: string } },
  expected: { charges: Charges; sees: string },
  actual: { charges: Charges; sees: string; chargeCount: number; requests?: number },
): void {
  const { row, column } = cell;
  const counts = type === 'refund-cell' ? 'refunds' : 'charges';
  const description = { scenario: row.id, configuration: column.id, counts, expected, actual };
  testInfo.annotations.push({ type, description: JSON.stringify(description) });
  expect({ charges: actual.charges, sees: actual.sees }, `${row.title} / ${column.title}`).toEqual(expected);
}
