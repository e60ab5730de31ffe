// Each background job reads only what is due or in doubt, whatever the tables hold: on a database of 100,000
// settled orders (with their charges, dedup rows, events, receipts, fencing tokens and a refund in ten), made by
// SQL in a database of this file's own, each job runs once as the app runs it, in a process of its own, and
// PostgreSQL's own counters say how many rows it read of each table. A job that scans a table it should look
// into by an index reads all of its rows; the bound here is 1% of them (the due and unpublished rows the fill
// leaves, and what the index walks past). Issue 30: cost as data grows.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabase } from '../../scripts/lib/migrations.ts';
import { fillSettledOrders, settle } from '../../scripts/lib/scale/fill.ts';
import { JOBS, runJob, type TableReads } from '../../scripts/lib/scale/reads.ts';

const SETTLED = 100_000;
/**
 * Fewer than a retention batch (200): the bound is one batch's. A run of many batches walks again, once, the index
 * entries of the rows the batch before it deleted (decision 033): 300 due orders in two batches read 1.3%.
 */
const DUE = 150;
const UNPUBLISHED = 50;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  const url = await freshDatabase(String(process.env.DATABASE_URL), `scale_jobs_${process.pid}`);
  // Closed before any job runs: its reads are counted when it ends, not in a job's.
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await fillSettledOrders(db, { settled: SETTLED, due: DUE, unpublished: UNPUBLISHED });
  await settle(db, { quiet: true });
  await db.end();
  // The relay's events go to a Redis database no other test file uses (workers have 1-4).
  const redis = new URL(String(process.env.REDIS_URL));
  redis.pathname = '/15';
  env = { ...process.env, DATABASE_URL: url, REDIS_URL: redis.toString(), RETENTION_DAYS: '30' };
}, 240_000);

afterAll(async () => {
  if (env) await dropDatabase(String(process.env.DATABASE_URL), String(env.DATABASE_URL));
});

/** The tables of at least 100,000 rows the job read more than 1% of: `table: rows read of rows`. */
function scanned(reads: TableReads): string[] {
  return Object.entries(reads)
    .filter(([, table]) => table.rows >= SETTLED && table.seqRows + table.indexRows > table.rows / 100)
    .map(([name, table]) => `${name}: ${table.seqRows} by scans + ${table.indexRows} by index of ${table.rows}`);
}

describe(`on ${SETTLED.toLocaleString('en')} settled orders`, () => {
  it.each(JOBS)('the %s job reads only what is due or in doubt', async (job) => {
    const run = await runJob(job, env);
    expect(scanned(run.reads)).toEqual([]);
    // And it did its work: retention pruned the due orders, the relay published the unpublished events.
    if (job === 'retention') expect(run.found).toBeGreaterThanOrEqual(DUE);
    if (job === 'relay') expect(run.found).toBe(UNPUBLISHED);
  });
});
