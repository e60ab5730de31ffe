// A payment's claim and record find its order by its key, whatever the statistics say of the statuses. Both check
// the order's status (`PENDING` to claim it, `PROCESSING` to record its outcome), which the sweep's index on
// (status, claimed_at) also matches. Where the statistics were taken when every order was settled, a status
// written into the statement's text as a literal made that index the planner's choice: a claim then walked every
// PENDING order, about 4 ms each on 30,000 of them (the benchmark's section 7, a database of a million settled
// orders, fell to 0.79 of the small one's throughput; decision 038). With the statuses as parameters, the generic
// plan cannot lean on them. Here, as there, in a database of this file's own: settled orders, statistics taken,
// fresh ones since; each statement runs as the hot path runs it (prepared, by its generic plan).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimStatementFor, recordStatement } from '../../lib/defences/order-claim/store.ts';
import { dropDatabase, freshDatabase } from '../../scripts/lib/migrations.ts';
import { explainByGenericPlan, scanUnderUpdate, sumOf } from './generic-plan.ts';

const SETTLED = 20_000;
const FRESH = 5_000;
let url: string;
let db: pg.Client;

beforeAll(async () => {
  url = await freshDatabase(String(process.env.DATABASE_URL), `scale_stale_stats_${process.pid}`);
  db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query('ALTER TABLE orders SET (autovacuum_enabled = false)');
  await db.query(`
    INSERT INTO orders (order_no, amount_cents, status, charge_id, paid_at, updated_at)
    SELECT 'ord_s' || lpad(i::text, 12, '0'), 4200, 'PAID', 'ch_' || i, now(), now() FROM generate_series(1, ${SETTLED}) i`);
  await db.query('ANALYZE orders');
  // Fresh orders since the statistics, one of them claimed (PROCESSING, its dedup row without an outcome).
  await db.query(`
    INSERT INTO orders (order_no, amount_cents, status, updated_at)
    SELECT 'ord_f' || lpad(i::text, 12, '0'), 4200, 'PENDING', now() FROM generate_series(1, ${FRESH}) i`);
  await db.query(`
    WITH o AS (
      UPDATE orders SET status = 'PROCESSING', attempt_id = 'att_1', claimed_at = now(), fence = 1, first_fence = 1
      WHERE order_no = 'ord_f000000000001' RETURNING order_no)
    INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at)
    SELECT 'PAYMENT', order_no, 'att_1', 1, 1, now() FROM o`);
}, 120_000);

afterAll(async () => {
  await db?.end();
  if (url) await dropDatabase(String(process.env.DATABASE_URL), url);
});

describe(`${FRESH.toLocaleString('en')} fresh orders since the statistics of ${SETTLED.toLocaleString('en')} settled ones`, () => {
  it('claiming one reads that order, not every PENDING one', async () => {
    const { statement, values } = claimStatementFor(
      { stateMachine: true, uniqueConstraint: true },
      { orderNo: 'ord_f000000000002', attemptId: 'att_2', now: new Date(), caller: 'c.x', amountCents: 4200 },
    );
    const { removed, plan } = await scanOfOrders({ text: statement.text, values: statement.bind(values) });
    expect(plan).toContain('orders_pkey');
    expect(removed, plan).toBeLessThan(10);
  });

  it('recording one outcome reads that order, not every PROCESSING one', async () => {
    const paid = {
      status: 'PAID' as const,
      orderNo: 'ord_f000000000001',
      amountCents: 4_200,
      chargeId: 'ch_f',
      paidAt: new Date().toISOString(),
    };
    const hold = { orderNo: paid.orderNo, attemptId: 'att_1', fence: 1 };
    const { statement, values } = recordStatement(paid, hold, { stateMachine: true, uniqueConstraint: true });
    const { removed, plan } = await scanOfOrders({ text: statement.text, values: statement.bind(values) });
    expect(plan).toContain('orders_pkey');
    expect(removed, plan).toBeLessThan(10);
  });
});

/** The rows a statement's scan of orders under its update threw away, and the whole plan. */
async function scanOfOrders(statement: {
  text: string;
  values: unknown[];
}): Promise<{ removed: number; plan: string }> {
  const lines = await explainByGenericPlan(db, statement);
  const removed = sumOf(scanUnderUpdate(lines, 'orders'), /Rows Removed by (?:Filter|Index Recheck): (\d+)/g);
  return { removed, plan: lines.join('\n') };
}
