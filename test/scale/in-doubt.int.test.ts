// A payment's statements find its own dedup row by its key, however many rows are or were in doubt. Recording an
// outcome writes "WHERE biz_type = 'PAYMENT' AND biz_no = $1 AND outcome IS NULL", which the partial index of the
// rows in doubt also matches. Keyed by (biz_type, claimed_at), that index was the planner's choice when the
// statistics said no row had a null outcome (no receipt's row either: the benchmark runs no receipts worker): it
// is the smallest index, and a payment's claim adds an entry that its record leaves dead until a vacuum. Walked by
// type alone, every payment read every dead entry since the last vacuum and every row in doubt (about 290 blocks a
// payment in the benchmark, decision 038). Here, as there, in a database of this file's own: settled payments,
// statistics taken, payments claimed and settled since, and more in doubt now. The statement runs as the hot path
// runs it (prepared, by its generic plan), and EXPLAIN ANALYZE says what its scan of the dedup rows read.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordStatement } from '../../lib/defences/order-claim/store.ts';
import { dropDatabase, freshDatabase } from '../../scripts/lib/migrations.ts';
import { explainByGenericPlan, scanUnderUpdate, sumOf } from './generic-plan.ts';

const SETTLED = 20_000;
const SETTLED_SINCE = 2_000;
const IN_DOUBT = 200;
let url: string;
let db: pg.Client;

/** Orders `from`..`to` claimed by a payment each (order PROCESSING, dedup row without an outcome). */
const claim = (from: number, to: number) =>
  db.query(`
    WITH s AS (SELECT i, 'ord_d' || lpad(i::text, 12, '0') AS order_no FROM generate_series(${from}, ${to}) AS i),
    o AS (
      INSERT INTO orders (order_no, amount_cents, status, attempt_id, claimed_at, fence, first_fence, updated_at)
      SELECT order_no, 4200, 'PROCESSING', 'att_' || i, now(), 1, 1, now() FROM s)
    INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at)
    SELECT 'PAYMENT', order_no, 'att_' || i, 1, 1, now() FROM s`);
/** Every claimed payment's dedup row gets its outcome. */
const settleAll = () => db.query(`UPDATE idempotent_record SET outcome = '{}' WHERE outcome IS NULL`);

beforeAll(async () => {
  url = await freshDatabase(String(process.env.DATABASE_URL), `scale_in_doubt_${process.pid}`);
  db = new pg.Client({ connectionString: url });
  await db.connect();
  // No vacuum and no ANALYZE but this file's: the dead entries stay, the statistics are those it took.
  await db.query('ALTER TABLE idempotent_record SET (autovacuum_enabled = false)');
  await claim(1, SETTLED);
  await settleAll();
  await db.query('VACUUM ANALYZE idempotent_record');
  await claim(SETTLED + 1, SETTLED + SETTLED_SINCE);
  await settleAll();
  await db.query('ANALYZE idempotent_record');
  await claim(SETTLED + SETTLED_SINCE + 1, SETTLED + SETTLED_SINCE + IN_DOUBT);
}, 120_000);

afterAll(async () => {
  await db?.end();
  if (url) await dropDatabase(String(process.env.DATABASE_URL), url);
});

describe(`${SETTLED_SINCE.toLocaleString('en')} payments settled since the last vacuum, ${IN_DOUBT} in doubt`, () => {
  it('recording one payment’s outcome reads its own dedup row, not the others', async () => {
    const n = SETTLED + SETTLED_SINCE + IN_DOUBT;
    const orderNo = `ord_d${String(n).padStart(12, '0')}`;
    const paid = {
      status: 'PAID' as const,
      orderNo,
      amountCents: 4_200,
      chargeId: 'ch_d',
      paidAt: new Date().toISOString(),
    };
    const hold = { orderNo, attemptId: `att_${n}`, fence: 1 };
    const { statement, values } = recordStatement(paid, hold, { stateMachine: true, uniqueConstraint: true });
    const { scan, plan } = await scanOfDedupRows({ text: statement.text, values: statement.bind(values) });
    expect(scan.removed, plan).toBeLessThan(10);
    expect(scan.buffers, plan).toBeLessThan(20);
  });
});

/** What a statement's scan of idempotent_record under its update read (buffers) and threw away, and the whole plan. */
async function scanOfDedupRows(statement: {
  text: string;
  values: unknown[];
}): Promise<{ scan: { removed: number; buffers: number }; plan: string }> {
  const lines = await explainByGenericPlan(db, statement, { buffers: true });
  const scan = scanUnderUpdate(lines, 'idempotent_record');
  const removed = sumOf(scan, /Rows Removed by (?:Filter|Index Recheck): (\d+)/g);
  const buffers = sumOf(scan, /shared hit=(\d+)/g) + sumOf(scan, /read=(\d+)/g);
  return { scan: { removed, buffers }, plan: lines.join('\n') };
}
