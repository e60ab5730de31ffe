import 'server-only';
// The proof matrix of the last scenario run (written by e2e/matrix-reporter.ts), for the /scenarios page:
// the latest local run if there is one, else the copy committed under docs/.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export type MatrixCell = {
  scenario: string;
  configuration: string;
  counts?: 'charges' | 'receipts' | 'refunds';
  expected: { charges: string; sees: string };
  actual: { charges: string; sees: string; chargeCount: number; requests?: number };
  pass: boolean;
  /** In a partial run's matrix: this run measured it (the others are kept from the run before). */
  fresh?: boolean;
};

export type Matrix = {
  runAt?: string;
  durationSeconds?: number;
  machine?: string;
  /** A partial run (`-g`): how many cells it measured, merged into the matrix before it. */
  freshCells?: number;
  configurations: Array<{ id: string; title: string }>;
  scenarios: Array<{ id: string; title: string; source: number }>;
  cells: MatrixCell[];
  /** The key-strategy matrix: layer 2 alone, one column per way of making its key. */
  keyStrategies?: {
    columns: Array<{ id: string; title: string }>;
    rows: Array<{ id: string; title: string; source: number; sameKeyUnder: string[]; why: string }>;
    cells: MatrixCell[];
  };
  /** The release-rule matrix: layers 0-4, one column per rule for giving a claim back after a failure. */
  releaseRules?: {
    columns: Array<{ id: string; title: string }>;
    rows: Array<{ id: string; title: string; why: string }>;
    cells: MatrixCell[];
  };
  /** The answer matrix: every defence on, the five client recipes, one column per answer to a duplicate. */
  duplicateAnswers?: {
    columns: Array<{ id: string; title: string }>;
    rows: Array<{ id: string; title: string }>;
    cells: MatrixCell[];
  };
  /** The refund-key matrix: every defence on, one column per way of making a refund's key. */
  refundKeys?: {
    columns: Array<{ id: string; title: string }>;
    rows: Array<{ id: string; title: string; channel: string; owedCents: number; why: string }>;
    cells: MatrixCell[];
  };
  /** The database-failover matrix: PostgreSQL under Patroni loses its primary, one row per replication mode. */
  databaseFailover?: {
    columns: Array<{ id: string; title: string }>;
    rows: Array<{ id: string; title: string; synchronous: boolean }>;
    cells: MatrixCell[];
  };
  from: 'latest run' | 'docs';
};

export async function readLatestMatrix(): Promise<Matrix | undefined> {
  for (const [file, from] of [
    [path.join(process.cwd(), 'e2e', '.results', 'matrix.json'), 'latest run'],
    [path.join(process.cwd(), 'docs', 'scenario-matrix.json'), 'docs'],
  ] as const) {
    try {
      return { ...(JSON.parse(await readFile(file, 'utf8')) as Omit<Matrix, 'from'>), from };
    } catch {
      // not there: try the next
    }
  }
  return undefined;
}
