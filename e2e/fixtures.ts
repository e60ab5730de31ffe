// The custom `test` of every spec: fresh data per test (each test creates its own orders, with its own
// lab settings, so tests run in parallel without touching each other), a page object for the checkout,
// and direct access to the database to count what the card network recorded.
import { type APIRequestContext, test as base, expect, type Locator, type Page } from '@playwright/test';
import pg from 'pg';
import type { AnswerSettings, ClaimSettings, KeyStrategy, Faults as LabFaults, Layers } from '../lib/lab/settings';

export type Faults = Partial<LabFaults>;

export { ALL_LAYERS_OFF as ALL_OFF, ALL_LAYERS_ON as ALL_ON } from '../lib/lab/settings';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });

/** Creates an order through the public API, with its own lab settings. */
/**
 * A charged attempt that times out on its client (the retrying-client recipes and the answer matrix): the bank
 * answers 4 s after charging, the client gives up on an attempt after 2.5 s. The first attempt always times
 * out (its answer cannot come before the bank's), and a retry has 2.5 s to be answered even on a busy machine
 * (with 1 s, a 409 that took longer under a loaded CI ended a recipe in a timeout); the first attempt is done
 * by the recipes' third or fourth request, two more before their budget of six is spent.
 */
export const SLOW_BANK = { bankLatencyMs: 4_000, clientTimeoutMs: 2_500 } as const;

export async function createOrder(
  request: APIRequestContext,
  lab: {
    layers: Layers;
    faults?: Faults;
    claims?: Partial<ClaimSettings>;
    keys?: { strategy: KeyStrategy };
    answers?: Partial<AnswerSettings>;
  },
  amountCents = 4_200,
): Promise<string> {
  const { layers, faults = {}, claims, keys, answers } = lab;
  const response = await request.post('/api/orders', {
    data: {
      amountCents,
      lab: {
        layers,
        faults,
        ...(claims ? { claims } : {}),
        ...(keys ? { keys } : {}),
        ...(answers ? { answers } : {}),
      },
    },
  });
  expect(response.status()).toBe(201);
  return ((await response.json()) as { orderNo: string }).orderNo;
}

/** What the card network recorded for the order. */
export async function chargeCount(orderNo: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM bank_charges WHERE merchant_ref = $1',
    [orderNo],
  );
  return rows[0]?.n ?? 0;
}

/** The receipts the "send receipt" consumer sent for the order. */
export async function receiptCount(orderNo: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM receipts WHERE order_no = $1', [
    orderNo,
  ]);
  return rows[0]?.n ?? 0;
}

export class CheckoutPage {
  readonly payButton: Locator;
  readonly outcome: Locator;
  readonly status: Locator;
  readonly chargeCount: Locator;

  constructor(readonly page: Page) {
    this.payButton = page.getByRole('button', { name: /Pay/ });
    this.outcome = page.getByRole('status');
    this.status = page.getByTestId('order-status');
    this.chargeCount = page.getByTestId('charge-count');
  }

  async open(orderNo: string): Promise<this> {
    await this.page.goto(`/checkout/${orderNo}`);
    await expect(this.payButton).toBeVisible();
    return this;
  }

  /** Waits until the outcome region says what the request was answered. */
  async outcomeText(): Promise<string> {
    await waitForAnswer(this.page);
    return (await this.outcome.textContent()) ?? '';
  }
}

/**
 * Waits until the checkout's outcome holds an answer (or the error page is shown), looking every 50 ms in the
 * page. A web-first assertion would do, but it polls at 100, 250, 500, then every 1000 ms: after a slow bank
 * that is half a second lost on average, in each of hundreds of cells.
 */
export async function waitForAnswer(page: Page, timeout = 20_000): Promise<void> {
  await page.waitForFunction(
    () => {
      const answer = document.querySelector('[role="status"][data-answer]')?.getAttribute('data-answer');
      const failed = [...document.querySelectorAll('h1, h2')].some((h) => h.textContent === 'Something went wrong');
      return failed || (answer !== undefined && answer !== null && answer !== 'idle' && answer !== 'pending');
    },
    undefined,
    { polling: 50, timeout },
  );
}

/** The order's refunds as the API shows them to this browser: the bank's, and the merchant's ledger. */
export async function refundsOf(page: Page, orderNo: string) {
  const view = (await (await page.request.get(`/api/orders/${orderNo}`)).json()) as {
    refunds: Array<{ amountCents: number }>;
    refundedCents: number;
  };
  return { amounts: view.refunds.map((refund) => refund.amountCents), refundedCents: view.refundedCents };
}

/** "Refund…" on the order's checkout, to the new refund's form: its request id, from the address. */
export async function openRefund(page: Page, orderNo: string): Promise<string> {
  await page.goto(`/checkout/${orderNo}`);
  const form = new RegExp(`/checkout/${orderNo}/refunds/rq_[A-Za-z0-9_-]{16}$`);
  // A click the page was not ready for goes nowhere (a clean clone's npm test: still on the checkout after 5 s):
  // clicked again while the checkout is shown. Each click makes a draft of its own; the address names the one open.
  await expect(async () => {
    if (!form.test(page.url())) await page.getByRole('button', { name: /^(Refund…|退款…)$/ }).click({ timeout: 2_000 });
    await expect(page).toHaveURL(form, { timeout: 4_000 });
  }).toPass({ timeout: 20_000 });
  return page.url().split('/').at(-1) ?? '';
}

/** Types the amount and submits; resolves once the outcome region holds this submit's answer. */
export async function refund(page: Page, dollars: string): Promise<void> {
  await page.getByLabel('Amount to refund, in US dollars').fill(dollars);
  await page.getByRole('button', { name: 'Refund', exact: true }).click();
  await expect(page.getByRole('status')).not.toHaveAttribute('data-answer', /^(idle|pending)$/, { timeout: 15_000 });
}

export const test = base.extend<{ db: pg.Pool; checkout: CheckoutPage }>({
  // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature
  db: async ({}, use) => {
    await use(pool);
  },
  checkout: async ({ page }, use) => {
    await use(new CheckoutPage(page));
  },
});

export { expect };
