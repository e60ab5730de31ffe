// A Playwright reporter that turns the scenario cells into the proof matrix (scenarios × configurations,
// each cell: the charges on the card statement and what the customer saw) and the key-strategy matrix
// (scenarios × the three ways of making layer 2's key, layer 2 alone), as JSON and Markdown:
//   e2e/.results/matrix.{json,md}   every run (the /scenarios page shows the latest)
//   docs/scenario-matrix.{json,md}  and the README's block, when a run covered the whole matrix
// The committed copies hold no timings or dates, so they change only when behaviour does.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import {
  type Charges,
  CONFIGURATIONS,
  KEY_STRATEGY_COLUMNS,
  KEY_STRATEGY_ROWS,
  rowCommand,
  rowGrep,
  SCENARIOS,
  type Sees,
} from './scenarios/matrix';

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
const README_BLOCKS = { proof: 'scenario-matrix', keys: 'key-strategy-matrix' } as const;

/** A table: its rows and columns, by id and title. */
type Shape = { rows: Array<{ id: string; title: string }>; columns: Array<{ id: string; title: string }> };
const PROOF: Shape = { rows: SCENARIOS, columns: CONFIGURATIONS };
const KEYS: Shape = {
  rows: KEY_STRATEGY_ROWS.map((row) => ({ id: row.scenario.id, title: row.scenario.title })),
  columns: KEY_STRATEGY_COLUMNS,
};

export default class MatrixReporter implements Reporter {
  private cells = new Map<string, CellRecord>();
  private keyCells = new Map<string, CellRecord>();
  private started = Date.now();

  onTestEnd(test: TestCase, result: TestResult): void {
    for (const [type, cells] of [
      ['matrix-cell', this.cells],
      ['key-strategy-cell', this.keyCells],
    ] as const) {
      // Most tests record one cell; a row run once for all its cells (matrix.ts `oneRun`) records eight.
      const recorded = result.annotations.filter((a) => a.type === type);
      const annotations = recorded.length > 0 ? recorded : test.annotations.filter((a) => a.type === type);
      for (const annotation of annotations) {
        if (!annotation.description) continue;
        const cell = JSON.parse(annotation.description) as Omit<CellRecord, 'pass'>;
        // A test of one cell fails for that cell. A test of several fails when any of them differs: each of its
        // cells passes on its own outcome.
        const ran = result.status === 'passed' || annotations.length > 1;
        const pass = ran && sameOutcome(cell.expected, cell.actual);
        cells.set(`${cell.scenario}/${cell.configuration}`, { ...cell, pass });
      }
    }
  }

  onEnd(result: FullResult): void {
    if (this.cells.size === 0 && this.keyCells.size === 0) return;
    const cells = [...this.cells.values()];
    const keyCells = [...this.keyCells.values()];
    const complete =
      cells.length === SCENARIOS.length * CONFIGURATIONS.length &&
      keyCells.length === KEY_STRATEGY_ROWS.length * KEY_STRATEGY_COLUMNS.length;
    const run = {
      runAt: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - this.started) / 1000),
      status: result.status,
      machine: `${cpus().length} cores, Node ${process.version}, ${process.platform}`,
      complete,
    };
    mkdirSync(RESULTS, { recursive: true });
    const data = matrixData(cells, keyCells);
    writeFileSync(path.join(RESULTS, 'matrix.json'), `${JSON.stringify({ ...run, ...data }, null, 2)}\n`);
    writeFileSync(path.join(RESULTS, 'matrix.md'), markdown(cells, keyCells, run));
    if (complete && [...cells, ...keyCells].every((cell) => cell.pass)) {
      writeFileSync(path.join(ROOT, 'docs/scenario-matrix.json'), `${JSON.stringify(data, null, 2)}\n`);
      writeFileSync(path.join(ROOT, 'docs/scenario-matrix.md'), markdown(cells, keyCells));
      updateReadme(README_BLOCKS.proof, table(PROOF, cells));
      updateReadme(README_BLOCKS.keys, table(KEYS, keyCells));
    }
    console.log(`\n${summary(PROOF, cells, 'Scenario matrix')}`);
    if (keyCells.length > 0) console.log(`\n${summary(KEYS, keyCells, 'Key-strategy matrix (layer 2 alone)')}`);
  }

  printsToStdio(): boolean {
    return false;
  }
}

const sameOutcome = (a: { charges: Charges; sees: Sees }, b: { charges: Charges; sees: Sees }) =>
  a.charges === b.charges && a.sees === b.sees;

function matrixData(cells: CellRecord[], keyCells: CellRecord[]) {
  return {
    configurations: CONFIGURATIONS.map(({ id, title }) => ({ id, title })),
    scenarios: SCENARIOS.map(({ id, title, source }) => ({ id, title, source })),
    cells: sorted(PROOF, cells),
    keyStrategies: {
      layers: 'requestKey',
      columns: KEY_STRATEGY_COLUMNS,
      rows: KEY_STRATEGY_ROWS.map(({ scenario, sameKeyUnder, why }) => ({
        id: scenario.id,
        title: scenario.title,
        source: scenario.source,
        sameKeyUnder,
        why,
      })),
      cells: sorted(KEYS, keyCells),
    },
  };
}

function sorted(shape: Shape, cells: CellRecord[]): CellRecord[] {
  const index = (cell: CellRecord) =>
    shape.rows.findIndex((r) => r.id === cell.scenario) * 100 +
    shape.columns.findIndex((c) => c.id === cell.configuration);
  return [...cells].sort((a, b) => index(a) - index(b));
}

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

/** The table, with a last column that reproduces each row: `npm run scenarios -- <that>`. */
function table(shape: Shape, cells: CellRecord[]): string {
  const head = `| Scenario | ${shape.columns.map((c) => c.title).join(' | ')} | Reproduce |`;
  const rule = `|---|${shape.columns.map(() => '---').join('|')}|---|`;
  const rows = shape.rows.map(
    (s) =>
      `| ${s.title} | ${shape.columns.map((c) => cellText(find(cells, s.id, c.id))).join(' | ')} | \`${rowGrep(s.id)}\` |`,
  );
  return [head, rule, ...rows].join('\n');
}

function markdown(
  cells: CellRecord[],
  keyCells: CellRecord[],
  run?: { runAt: string; durationSeconds: number; machine: string },
): string {
  const failed = [...cells, ...keyCells].filter((cell) => !cell.pass).length;
  return [
    '# Scenario matrix',
    '',
    'Each cell: what the card network recorded for the order (or, for the queue, how many receipts the customer got), and what the customer or the calling service saw at the end.',
    'Every cell is asserted against the declaration in `e2e/scenarios/matrix.ts`; ❌ marks a cell that differed.',
    `The last column reproduces a row: \`${rowCommand(SCENARIOS[0]?.id ?? '')}\` runs the first one, every cell of it.`,
    run
      ? `\nRun ${run.runAt}, ${run.durationSeconds} s, ${run.machine}. ${failed === 0 ? 'All cells as declared.' : `${failed} cell(s) differ.`}`
      : '',
    '',
    '## Which defence stops which duplicate',
    '',
    table(PROOF, cells),
    '',
    '## Key strategies: layer 2 alone, three ways of making its key',
    '',
    'The article’s first detail. Only layer 2 is on (the pending UI off too); the columns are the lab’s `keys.strategy`. A duplicate is stopped only when its retry carries the first request’s key.',
    '',
    table(KEYS, keyCells),
    '',
    ...KEY_STRATEGY_ROWS.map(
      (row) =>
        `- ${row.scenario.title}: the same key under ${row.sameKeyUnder.map((id) => KEY_STRATEGY_COLUMNS.find((c) => c.id === id)?.title ?? id).join(' and ')}; the others miss it (${row.why}).`,
    ),
    '',
  ].join('\n');
}

function updateReadme(block: string, matrix: string): void {
  const file = path.join(ROOT, 'README.md');
  let readme: string;
  try {
    readme = readFileSync(file, 'utf8');
  } catch {
    return;
  }
  const startMark = `<!-- ${block}:start -->`;
  const start = readme.indexOf(startMark);
  const end = readme.indexOf(`<!-- ${block}:end -->`);
  if (start < 0 || end < start) return;
  const next = `${readme.slice(0, start + startMark.length)}\n${matrix}\n${readme.slice(end)}`;
  if (next !== readme) writeFileSync(file, next);
}

function summary(shape: Shape, cells: CellRecord[], name: string): string {
  const short = (cell: CellRecord | undefined) =>
    cell
      ? `${cell.pass ? ' ' : '✗'}${cell.actual.charges === 'more' ? String(cell.actual.chargeCount) : cell.actual.charges}`.padEnd(
          4,
        )
      : ' ·  ';
  const width = Math.max(...shape.rows.map((s) => s.title.length));
  const lines = [
    `${name} (charges per order; ✗ = differs from matrix.ts): ${cells.filter((c) => c.pass).length}/${cells.length} cells as declared`,
    `${''.padEnd(width)}  ${shape.columns.map((c) => c.id.slice(0, 4).padEnd(4)).join(' ')}`,
    ...shape.rows.map(
      (s) => `${s.title.padEnd(width)}  ${shape.columns.map((c) => short(find(cells, s.id, c.id))).join(' ')}`,
    ),
  ];
  return lines.join('\n');
}
