// The answer matrix (matrix.ts, ANSWER_ROWS): the article's second detail, with the project's five retrying-client
// recipes (docs/clients.md) as they are. A payment whose first attempt is charged and times out on the client;
// the recipe retries with its key. Told the first result, it ends with its charge; told an error, it cannot
// tell "already submitted" from "in progress", spends its whole retry budget, and never learns it was charged.
// The requests each intent cost and whether the caller learned its charge are held to the declaration.
import { pay as axiosPay } from '../clients/axios';
import { pay as fetchPay } from '../clients/fetch';
import { pay as gotPay } from '../clients/got';
import { pay as kyPay } from '../clients/ky';
import { pay as undiciPay } from '../clients/undici';
import { ALL_ON, chargeCount, createOrder, SLOW_BANK, test } from '../fixtures';
import { DEEP_TAG } from '../tiers';
import { holdCell, settledCount } from './cell';
import {
  ANSWER_COLUMNS,
  ANSWER_ROWS,
  ANSWER_TAG,
  type AnswerSees,
  chargesBucket,
  expectedAnswerCell,
  RECIPE_BUDGET,
  rowTag,
} from './matrix';

const RECIPES = { undici: undiciPay, got: gotPay, ky: kyPay, axios: axiosPay, fetch: fetchPay };

for (const row of ANSWER_ROWS) {
  test.describe(`scenario: ${row.title}`, { tag: [rowTag(row.id), ANSWER_TAG] }, () => {
    for (const column of ANSWER_COLUMNS) {
      // The second column (a duplicate told an error) is `npm run test:deep`'s (e2e/tiers.ts); npm test sees it in
      // workshop exercise 14.
      const tag = column.id === 'error' ? [DEEP_TAG] : [];
      test(column.title, { tag }, async ({ request, baseURL }, testInfo) => {
        const orderNo = await createOrder(request, {
          layers: ALL_ON,
          faults: { bankLatencyMs: SLOW_BANK.bankLatencyMs },
          answers: { duplicate: column.id },
        });
        const result = await RECIPES[row.client](
          baseURL ?? '',
          { orderNo, amountCents: 4_200 },
          {
            idempotencyKey: `answer-${row.client}-${orderNo}`,
            clientId: `answer-${row.client}`,
            timeoutMs: SLOW_BANK.clientTimeoutMs,
          },
        );
        const count = await settledCount(orderNo, chargeCount);
        const order = (await (await request.get(`/api/orders/${orderNo}`)).json()) as {
          charges: Array<{ id: string }>;
        };
        const charge = (result.body as { chargeId?: string } | undefined)?.chargeId;
        const learned = result.status < 300 && charge !== undefined && charge === order.charges[0]?.id;
        const sees: AnswerSees | string = learned
          ? 'learned the charge'
          : result.attempts === RECIPE_BUDGET
            ? `gave up after ${RECIPE_BUDGET} requests`
            : `ended with ${result.status} after ${result.attempts} requests`;
        const actual = { charges: chargesBucket(count), sees, chargeCount: count, requests: result.attempts };
        holdCell(testInfo, 'answer-cell', { row, column }, expectedAnswerCell(column.id), actual);
      });
    }
  });
}
