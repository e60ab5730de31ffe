// What a background job reads: PostgreSQL's own counters of rows read per table (by sequential scans, and index
// entries read by index scans), before and after the job runs once in a process of its own (job.ts). A job that
// scans only what is due or in doubt reads a few rows of a table of a million; one that scans it reads them all,
// whatever the plan's estimate said. Counters, not a timer and not EXPLAIN's guess: what the job did.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { ROOT } from '../paths.ts';

export const JOBS = ['sweep', 'retention', 'relay'] as const;
export type Job = (typeof JOBS)[number];

/** Per table: rows read by sequential scans, index entries read by index scans, and the rows it holds. */
export type TableReads = Record<string, { seqRows: number; indexRows: number; rows: number }>;

export async function tableReads(db: pg.Pool | pg.Client): Promise<TableReads> {
  const { rows } = await db.query<{ table: string; seq: string; idx: string; live: string }>(`
    SELECT t.relname AS table, COALESCE(t.seq_tup_read, 0) AS seq,
      COALESCE((SELECT sum(i.idx_tup_read) FROM pg_stat_user_indexes i WHERE i.relid = t.relid), 0) AS idx,
      t.n_live_tup AS live
    FROM pg_stat_user_tables t`);
  return Object.fromEntries(
    rows.map((row) => [row.table, { seqRows: Number(row.seq), indexRows: Number(row.idx), rows: Number(row.live) }]),
  );
}

/** Rows read per table between two readings (and the table's size at the second). */
export function readsBetween(before: TableReads, after: TableReads): TableReads {
  return Object.fromEntries(
    Object.entries(after).map(([table, now]) => {
      const then = before[table] ?? { seqRows: 0, indexRows: 0, rows: 0 };
      return [
        table,
        { seqRows: now.seqRows - then.seqRows, indexRows: now.indexRows - then.indexRows, rows: now.rows },
      ];
    }),
  );
}

export type JobRun = { job: Job; ms: number; found: number; reads: TableReads };

/**
 * Runs `job` once against the database of `env.DATABASE_URL` and returns how long it took inside its process and
 * what it read. A backend sends its counters when it ends (or idle, up to 10 s later): every other connection that
 * read these tables must be closed first, or its reads land in the job's. The counters are read on a connection
 * of this function's own, until they hold still.
 */
export async function runJob(job: Job, env: NodeJS.ProcessEnv): Promise<JobRun> {
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  try {
    const before = await stillReads(db);
    const run = () =>
      promisify(execFile)(
        process.execPath,
        ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'scripts/lib/scale/job.ts'), job],
        { cwd: ROOT, env, timeout: 300_000 },
      );
    let { stdout } = await run();
    // On a busy machine `node --import tsx` now and then exits 0 having run nothing, with no word (as
    // e2e/conformance.spec.ts sees): the job always prints its line, so it is run again, twice at most.
    for (let again = 0; again < 2 && stdout.trim() === ''; again++) ({ stdout } = await run());
    const line = stdout.trim().split('\n').at(-1) ?? '';
    const { ms, found } = JSON.parse(line) as { ms: number; found: number };
    return { job, ms, found, reads: readsBetween(before, await stillReads(db)) };
  } finally {
    await db.end();
  }
}

/** The counters once they hold still (three readings 200 ms apart, 5 s at most). */
async function stillReads(db: pg.Client): Promise<TableReads> {
  let last = await tableReads(db);
  for (let still = 0, tries = 0; still < 3 && tries < 25; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await tableReads(db);
    still = JSON.stringify(again) === JSON.stringify(last) ? still + 1 : 0;
    last = again;
  }
  return last;
}
