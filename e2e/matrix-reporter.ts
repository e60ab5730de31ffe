// A Playwright reporter that turns the scenario cells into the proof matrix (scenarios × configurations,
// each cell: the charges on the card statement and what the customer saw), as JSON and Markdown:
//   e2e/.results/matrix.{json,md}   every run (the /scenarios page shows the latest)
//   docs/scenario-matrix.{json,md}  and the README's block, when a run covered the whole matrix
// The committed copies hold no timings or dates, so they change only when behaviour does.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import { type Charges, CONFIGURATIONS, SCENARIOS, type Sees } from './scenarios/matrix';

type CellRecord = {
  scenario: string;
  configuration: string;
  counts: 'charges' | 'receipts';
  expected: { charges: Charges; sees: Sees };
  actual: { charges: Charges; sees: Sees; chargeCount: number };
  pass: boolean;
};

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'e2e/.results');
const README_START = '<!-- scenario-matrix:start -->';
const README_END = '<!-- scenario-matrix:end -->';

export default class MatrixReporter implements Reporter {
  private cells = new Map<string, CellRecord>();
  private started = Date.now();

  onTestEnd(test: TestCase, result: TestResult): void {
    const annotation =
      result.annotations.find((a) => a.type === 'matrix-cell') ??
      test.annotations.find((a) => a.type === 'matrix-cell');
    if (!annotation?.description) return;
    const cell = JSON.parse(annotation.description) as Omit<CellRecord, 'pass'>;
    this.cells.set(`${cell.scenario}/${cell.configuration}`, { ...cell, pass: result.status === 'passed' });
  }

  onEnd(result: FullResult): void {
    if (this.cells.size === 0) return;
    const cells = [...this.cells.values()];
    const complete = cells.length === SCENARIOS.length * CONFIGURATIONS.length;
    const run = {
      runAt: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - this.started) / 1000),
      status: result.status,
      machine: `${cpus().length} cores, Node ${process.version}, ${process.platform}`,
      complete,
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(RESULTS, 'matrix.json'), `${JSON.stringify({ ...run, ...matrixData(cells) }, null, 2)}\n`);
    writeFileSync(path.join(RESULTS, 'matrix.md'), markdown(cells, run));
    if (complete && cells.every((cell) => cell.pass)) {
      writeFileSync(path.join(ROOT, 'docs/scenario-matrix.json'), `${JSON.stringify(matrixData(cells), null, 2)}\n`);
      writeFileSync(path.join(ROOT, 'docs/scenario-matrix.md'), markdown(cells));
      updateReadme(table(cells));
    }
    console.log(`\n${summary(cells)}`);
  }

  printsToStdio(): boolean {
    return false;
  }
}

function matrixData(cells: CellRecord[]) {
  return {
    configurations: CONFIGURATIONS.map(({ id, title }) => ({ id, title })),
    scenarios: SCENARIOS.map(({ id, title, source }) => ({ id, title, source })),
    cells: [...cells].sort((a, b) => key(a).localeCompare(key(b))),
  };
}

const key = (cell: CellRecord) =>
  `${String(SCENARIOS.findIndex((s) => s.id === cell.scenario)).padStart(2, '0')}${String(CONFIGURATIONS.findIndex((c) => c.id === cell.configuration)).padStart(2, '0')}`;

function find(cells: CellRecord[], scenario: string, configuration: string): CellRecord | undefined {
  return cells.find((cell) => cell.scenario === scenario && cell.configuration === configuration);
}

function cellText(cell: CellRecord | undefined): string {
  if (!cell) return '·';
  const charges =
    cell.actual.charges === 'more'
      ? `**${cell.actual.chargeCount}** charges`
      : `${cell.actual.charges} charge${cell.actual.charges === '1' ? '' : 's'}`;
  const mark = cell.pass ? '' : ` ❌ expected ${cell.expected.charges}, ${cell.expected.sees}`;
  return `${charges}, ${cell.actual.sees}${mark}`;
}

function table(cells: CellRecord[]): string {
  const head = `| Scenario | ${CONFIGURATIONS.map((c) => c.title).join(' | ')} |`;
  const rule = `|---|${CONFIGURATIONS.map(() => '---').join('|')}|`;
  const rows = SCENARIOS.map(
    (s) => `| ${s.title} | ${CONFIGURATIONS.map((c) => cellText(find(cells, s.id, c.id))).join(' | ')} |`,
  );
  return [head, rule, ...rows].join('\n');
}

function markdown(cells: CellRecord[], run?: { runAt: string; durationSeconds: number; machine: string }): string {
  const failed = cells.filter((cell) => !cell.pass).length;
  return [
    '# Scenario matrix',
    '',
    'Each cell: what the card network recorded for the order (or, for the queue, how many receipts the customer got), and what the customer or the calling service saw at the end.',
    'Every cell is asserted against the declaration in `e2e/scenarios/matrix.ts`; ❌ marks a cell that differed.',
    run
      ? `\nRun ${run.runAt}, ${run.durationSeconds} s, ${run.machine}. ${failed === 0 ? 'All cells as declared.' : `${failed} cell(s) differ.`}`
      : '',
    '',
    table(cells),
    '',
  ].join('\n');
}

function updateReadme(matrix: string): void {
  const file = path.join(ROOT, 'README.md');
  let readme: string;
  try {
    readme = readFileSync(file, 'utf8');
  } catch {
    return;
  }
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) return;
  const next = `${readme.slice(0, start + README_START.length)}\n${matrix}\n${readme.slice(end)}`;
  if (next !== readme) writeFileSync(file, next);
}

function summary(cells: CellRecord[]): string {
  const short = (cell: CellRecord | undefined) =>
    cell
      ? `${cell.pass ? ' ' : '✗'}${cell.actual.charges === 'more' ? String(cell.actual.chargeCount) : cell.actual.charges}`.padEnd(
          4,
        )
      : ' ·  ';
  const width = Math.max(...SCENARIOS.map((s) => s.title.length));
  const lines = [
    `Scenario matrix (charges per order; ✗ = differs from matrix.ts): ${cells.filter((c) => c.pass).length}/${cells.length} cells as declared`,
    `${''.padEnd(width)}  ${CONFIGURATIONS.map((c) => c.id.slice(0, 4).padEnd(4)).join(' ')}`,
    ...SCENARIOS.map(
      (s) => `${s.title.padEnd(width)}  ${CONFIGURATIONS.map((c) => short(find(cells, s.id, c.id))).join(' ')}`,
    ),
  ];
  return lines.join('\n');
}
