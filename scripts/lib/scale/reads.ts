// What a background job reads: PostgreSQL's own counters of rows read per table (by sequential scans, and index
// entries read by index scans), before and after the job runs once in a process of its own (job.ts). A job that
// scans only what is due or in doubt reads a few rows of a table of a million; one that scans it reads them all,
// whatever the plan's estimate said. Counters, not a timer and not EXPLAIN's guess: what the job did.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
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
 * Runs `job` once against the database of `env.DATABASE_URL` (which `db` must be connected to) and returns how long
 * it took inside its process and what it read. The counters are sent when the job's connections end; they are
 * read until they hold still.
 */
export async function runJob(job: Job, db: pg.Pool | pg.Client, env: NodeJS.ProcessEnv): Promise<JobRun> {
  const before = await tableReads(db);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'scripts/lib/scale/job.ts'), job],
    { cwd: ROOT, env, timeout: 300_000 },
  );
  const line = stdout.trim().split('\n').at(-1) ?? '';
  const { ms, found } = JSON.parse(line) as { ms: number; found: number };
  let after = await tableReads(db);
  for (let still = 0, tries = 0; still < 3 && tries < 25; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await tableReads(db);
    still = JSON.stringify(again) === JSON.stringify(after) ? still + 1 : 0;
    after = again;
  }
  return { job, ms, found, reads: readsBetween(before, after) };
}
