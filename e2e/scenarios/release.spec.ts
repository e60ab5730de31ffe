// The release-rule matrix (matrix.ts, RELEASE_ROWS): the article's third detail, through the API. Each cell is
// an order under one rule: its first request meets the row's fault, the fault is cleared (the bank, or the
// downstream system, is back), and the client retries with the same key until it is answered for good. The
// card's charges and what the client got are held to the declaration; a rule that did better or worse than
// declared fails the cell.
import { chargeCount, createOrder, expect, test } from '../fixtures';
import { categorizeAnswer, holdCell, payOnce, settledCount } from './cell';
import {
  chargesBucket,
  RELEASE_COLUMNS,
  RELEASE_LAYERS,
  RELEASE_LEASE_MS,
  RELEASE_ROWS,
  RELEASE_TAG,
  type ReleaseSees,
  rowTag,
} from './matrix';

for (const row of RELEASE_ROWS) {
  test.describe(`scenario: ${row.title}`, { tag: [rowTag(row.id), RELEASE_TAG] }, () => {
    for (const column of RELEASE_COLUMNS) {
      test(column.title, async ({ request, db }, testInfo) => {
        const orderNo = await createOrder(request, {
          layers: RELEASE_LAYERS,
          faults: row.fault,
          claims: { leaseMs: RELEASE_LEASE_MS, release: column.id },
        });
        const caller = { key: `pay-${orderNo}`, client: `release-${column.id}` };
        const first = await payOnce(request, orderNo, caller);
        expect(first.status, 'the first request fails').not.toBe(201);
        await db.query(`UPDATE orders SET lab = lab - 'faults' WHERE order_no = $1`, [orderNo]);
        const sees = await retryUntilAnsweredForGood(request, orderNo, caller);
        const count = await settledCount(orderNo, chargeCount);
        const actual = { charges: chargesBucket(count), sees, chargeCount: count };
        holdCell(testInfo, 'release-cell', { row, column }, row.cells[column.id], actual);
      });
    }
  });
}

/**
 * The client's retries with its key: on "in progress" (409) or a failure (5xx) it waits as Retry-After says and
 * asks again, for up to 20 s (the lease is 5 s; the bank settles within 10 s). What it got at the end, and
 * whether it was told "in progress" before.
 */
async function retryUntilAnsweredForGood(
  request: Parameters<typeof payOnce>[0],
  orderNo: string,
  caller: { key: string; client: string },
): Promise<ReleaseSees> {
  let refused = false;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await payOnce(request, orderNo, caller);
    const final = answer.status !== 409 && answer.status < 500;
    if (final || Date.now() > deadline) {
      const sees = categorizeAnswer(answer);
      return refused ? `in progress, then ${sees}` : sees;
    }
    if (answer.status === 409) refused = true;
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after'] ?? '1') * 1000));
  }
}
