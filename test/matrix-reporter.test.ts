// The scenario reporter (e2e/matrix-reporter.ts) on a partial run, `npm run scenarios -- -g "@burst"`: its
// cells go into the last matrix, marked fresh, and every other cell stays (issue 29, item 6: the /scenarios
// page once showed only that run's 8 cells to the whole room).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FullResult, TestCase, TestResult } from '@playwright/test/reporter';
import { afterEach, describe, expect, it } from 'vitest';
import MatrixReporter from '../e2e/matrix-reporter.ts';

type Cell = { scenario: string; configuration: string; actual: { chargeCount: number }; fresh?: boolean };
type Stored = {
  cells: Cell[];
  keyStrategies: { cells: Cell[] };
  releaseRules: { cells: Cell[] };
  duplicateAnswers: { cells: Cell[] };
  refundKeys: { cells: Cell[] };
  databaseFailover: { cells: Cell[] };
  freshCells?: number;
  complete?: boolean;
};

const docs = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../docs/scenario-matrix.json'), 'utf8'),
) as Stored;
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** One finished test that recorded `cell`, as Playwright hands it to a reporter. */
function ran(reporter: MatrixReporter, cell: Cell, type = 'matrix-cell'): void {
  const annotations = [{ type, description: JSON.stringify(cell) }];
  reporter.onTestEnd(
    { annotations: [], tags: [] } as unknown as TestCase,
    { status: 'passed', annotations } as unknown as TestResult,
  );
}

describe('a partial scenario run', () => {
  it('replaces only the cells it measured, marks them fresh, and keeps every other cell of the last matrix', () => {
    const results = mkdtempSync(path.join(tmpdir(), 'matrix-'));
    folders.push(results);
    writeFileSync(path.join(results, 'matrix.json'), JSON.stringify(docs));
    const [first, second] = docs.cells as [Cell, Cell];
    const reporter = new MatrixReporter({ resultsDir: results });
    ran(reporter, { ...first, actual: { ...first.actual, chargeCount: 7 } });
    reporter.onEnd({ status: 'passed' } as FullResult);

    const latest = JSON.parse(readFileSync(path.join(results, 'matrix.json'), 'utf8')) as Stored;
    expect(latest.cells).toHaveLength(docs.cells.length);
    expect(latest.keyStrategies.cells).toHaveLength(docs.keyStrategies.cells.length);
    expect(latest.freshCells).toBe(1);
    const at = (cell: Cell) =>
      latest.cells.find((c) => c.scenario === cell.scenario && c.configuration === cell.configuration);
    expect(at(first)).toMatchObject({ fresh: true, actual: { chargeCount: 7 } });
    expect(at(second)).toMatchObject({ fresh: false, actual: { chargeCount: second.actual.chargeCount } });
    expect(latest.cells.filter((cell) => cell.fresh)).toHaveLength(1);
  });
});

describe('a whole run whose database-failover row failed before its cells', () => {
  it('is not complete: the last run’s failover cells are not published again as this run’s', () => {
    const results = mkdtempSync(path.join(tmpdir(), 'matrix-'));
    folders.push(results);
    const reporter = new MatrixReporter({ resultsDir: results });
    for (const [type, cells] of [
      ['matrix-cell', docs.cells],
      ['key-strategy-cell', docs.keyStrategies.cells],
      ['release-cell', docs.releaseRules.cells],
      ['answer-cell', docs.duplicateAnswers.cells],
      ['refund-cell', docs.refundKeys.cells],
    ] as const) {
      for (const cell of cells) ran(reporter, cell, type);
    }
    reporter.onTestEnd(
      { annotations: [], tags: ['@pg-failover-async'] } as unknown as TestCase,
      { status: 'failed', annotations: [] } as unknown as TestResult,
    );
    reporter.onEnd({ status: 'failed' } as FullResult);
    const latest = JSON.parse(readFileSync(path.join(results, 'matrix.json'), 'utf8')) as Stored;
    expect(latest.complete).toBe(false);
  });
});
