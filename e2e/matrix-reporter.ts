// A Playwright reporter that turns the scenario cells into the proof matrix (scenarios × configurations,
// each cell: the charges on the card statement and what the customer saw) and the key-strategy matrix
// (scenarios × the three ways of making layer 2's key, layer 2 alone) and the release-rule matrix (faults ×
// the three rules for giving a claim back), as JSON and Markdown:
//   e2e/.results/matrix.{json,md}   every run (the /scenarios page shows the latest); a partial run (`-g`) is
//                                   merged into the last one, its own cells marked fresh, so that one attendee's
//                                   `npm run scenarios -- -g "@burst"` leaves every other cell in place
//   docs/scenario-matrix.{json,md}  and the README's block, when a run covered the whole matrix
// The committed copies hold no timings or dates, so they change only when behaviour does.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import {
  ANSWER_COLUMNS,
  ANSWER_ROWS,
  type AnswerSees,
  type Charges,
  CONFIGURATIONS,
  DATABASE_FAILOVER_ROWS,
  KEY_STRATEGY_COLUMNS,
  KEY_STRATEGY_ROWS,
  REFUND_KEY_COLUMNS,
  REFUND_ROWS,
  RELEASE_COLUMNS,
  RELEASE_LEASE_MS,
  RELEASE_ROWS,
  type ReleaseSees,
  rowCommand,
  rowGrep,
  SCENARIOS,
  type Sees,
} from './scenarios/matrix';

type CellRecord = {
  scenario: string;
  configuration: string;
  counts: 'charges' | 'receipts' | 'refunds';
  expected: { charges: Charges; sees: Sees | ReleaseSees | AnswerSees };
  /** `requests`: how many requests the intent cost (the answer matrix's clients). */
  actual: { charges: Charges; sees: string; chargeCount: number; requests?: number };
  pass: boolean;
  /** In a partial run's matrix: this run measured the cell (the others are the last run's, kept in place). */
  fresh?: boolean;
};

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'e2e/.results');

/** `resultsDir`: where each run's matrix goes (a test's own folder; e2e/.results by default). */
export type MatrixReporterOptions = { resultsDir?: string };
const README_BLOCKS = {
  proof: 'scenario-matrix',
  keys: 'key-strategy-matrix',
  release: 'release-rule-matrix',
  answers: 'duplicate-answer-matrix',
  refunds: 'refund-key-matrix',
  databaseFailover: 'database-failover-matrix',
} as const;

/** A table: its rows and columns, by id and title. */
type Shape = { rows: Array<{ id: string; title: string }>; columns: Array<{ id: string; title: string }> };
const PROOF: Shape = { rows: SCENARIOS, columns: CONFIGURATIONS };
const KEYS: Shape = {
  rows: KEY_STRATEGY_ROWS.map((row) => ({ id: row.scenario.id, title: row.scenario.title })),
  columns: KEY_STRATEGY_COLUMNS,
};
const RELEASE: Shape = { rows: RELEASE_ROWS, columns: RELEASE_COLUMNS };
const ANSWERS: Shape = { rows: ANSWER_ROWS, columns: ANSWER_COLUMNS };
const REFUNDS: Shape = { rows: REFUND_ROWS, columns: REFUND_KEY_COLUMNS };
const DATABASE_FAILOVER: Shape = { rows: DATABASE_FAILOVER_ROWS, columns: CONFIGURATIONS };

export default class MatrixReporter implements Reporter {
  private cells = new Map<string, CellRecord>();
  private keyCells = new Map<string, CellRecord>();
  private releaseCells = new Map<string, CellRecord>();
  private answerCells = new Map<string, CellRecord>();
  private refundCells = new Map<string, CellRecord>();
  private failoverCells = new Map<string, CellRecord>();
  /** Whether a database-failover row ran in this run (npm test skips them; `npm run scenarios` runs them). */
  private failoverRan = false;
  private started = Date.now();
  private readonly results: string;

  constructor(options: MatrixReporterOptions = {}) {
    this.results = options.resultsDir ?? RESULTS;
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const tags = test.tags ?? [];
    if (result.status !== 'skipped' && DATABASE_FAILOVER_ROWS.some((row) => tags.includes(`@${row.id}`))) {
      this.failoverRan = true;
    }
    for (const [type, cells] of [
      ['matrix-cell', this.cells],
      ['key-strategy-cell', this.keyCells],
      ['release-cell', this.releaseCells],
      ['answer-cell', this.answerCells],
      ['refund-cell', this.refundCells],
      ['db-failover-cell', this.failoverCells],
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
    const all = {
      cells: [...this.cells.values()],
      keyCells: [...this.keyCells.values()],
      releaseCells: [...this.releaseCells.values()],
      answerCells: [...this.answerCells.values()],
      refundCells: [...this.refundCells.values()],
      failoverCells: [...this.failoverCells.values()],
    };
    const { cells, keyCells, releaseCells, answerCells, refundCells } = all;
    if ([cells, keyCells, releaseCells, answerCells, refundCells, all.failoverCells].every((l) => l.length === 0))
      return;
    const complete =
      cells.length === SCENARIOS.length * CONFIGURATIONS.length &&
      keyCells.length === KEY_STRATEGY_ROWS.length * KEY_STRATEGY_COLUMNS.length &&
      releaseCells.length === RELEASE_ROWS.length * RELEASE_COLUMNS.length &&
      answerCells.length === ANSWER_ROWS.length * ANSWER_COLUMNS.length &&
      refundCells.length === REFUND_ROWS.length * REFUND_KEY_COLUMNS.length &&
      // The database failover, when it ran, whole: a row that failed before its cells leaves the run incomplete.
      (!this.failoverRan || all.failoverCells.length === DATABASE_FAILOVER_ROWS.length * CONFIGURATIONS.length);
    // Only `npm run scenarios` runs the database failover (its own servers): a whole run that skipped it keeps the
    // last one's cells.
    if (complete && !this.failoverRan) {
      all.failoverCells = lastMatrix(this.results)?.databaseFailover?.cells ?? [];
    }
    const { failoverCells } = all;
    const run = {
      runAt: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - this.started) / 1000),
      status: result.status,
      machine: `${cpus().length} cores, Node ${process.version}, ${process.platform}`,
      complete,
    };
    mkdirSync(this.results, { recursive: true });
    const data = matrixData(all);
    const shown = complete ? all : mergedWithLast(all, this.results);
    const latest = complete ? { ...run, ...data } : { ...run, freshCells: countOf(all), ...matrixData(shown) };
    writeFileSync(path.join(this.results, 'matrix.json'), `${JSON.stringify(latest, null, 2)}\n`);
    writeFileSync(path.join(this.results, 'matrix.md'), markdown(shown, run));
    if (
      complete &&
      [...cells, ...keyCells, ...releaseCells, ...answerCells, ...refundCells, ...failoverCells].every(
        (cell) => cell.pass,
      )
    ) {
      writeFileSync(path.join(ROOT, 'docs/scenario-matrix.json'), `${JSON.stringify(data, null, 2)}\n`);
      writeFileSync(path.join(ROOT, 'docs/scenario-matrix.md'), markdown(all));
      updateReadme(README_BLOCKS.proof, table(PROOF, cells));
      updateReadme(README_BLOCKS.keys, table(KEYS, keyCells));
      updateReadme(README_BLOCKS.release, table(RELEASE, releaseCells));
      updateReadme(README_BLOCKS.answers, table(ANSWERS, answerCells));
      updateReadme(README_BLOCKS.refunds, table(REFUNDS, refundCells));
      updateReadme(README_BLOCKS.databaseFailover, table(DATABASE_FAILOVER, failoverCells));
    }
    console.log(`\n${summary(PROOF, cells, 'Scenario matrix')}`);
    if (keyCells.length > 0) console.log(`\n${summary(KEYS, keyCells, 'Key-strategy matrix (layer 2 alone)')}`);
    if (releaseCells.length > 0) console.log(`\n${summary(RELEASE, releaseCells, 'Release-rule matrix (layers 0-4)')}`);
    if (answerCells.length > 0) console.log(`\n${summary(ANSWERS, answerCells, 'Answer matrix (five clients)')}`);
    if (refundCells.length > 0) console.log(`\n${summary(REFUNDS, refundCells, 'Refund-key matrix', 'refunds')}`);
    if (this.failoverCells.size > 0) {
      console.log(`\n${summary(DATABASE_FAILOVER, failoverCells, 'Database-failover matrix (PostgreSQL, Patroni)')}`);
    }
  }

  printsToStdio(): boolean {
    return false;
  }
}

/**
 * A partial run's cells over the last run's (e2e/.results/matrix.json, or the committed docs/ copy): every
 * cell of the last matrix stays, those this run measured replace theirs and are marked fresh.
 */
function mergedWithLast(run: AllCells, results: string): AllCells {
  const last = lastMatrix(results);
  const merge = (old: CellRecord[] | undefined, fresh: CellRecord[]): CellRecord[] => {
    const byCell = new Map<string, CellRecord>();
    for (const cell of old ?? []) byCell.set(`${cell.scenario}/${cell.configuration}`, { ...cell, fresh: false });
    for (const cell of fresh) byCell.set(`${cell.scenario}/${cell.configuration}`, { ...cell, fresh: true });
    return [...byCell.values()];
  };
  return {
    cells: merge(last?.cells, run.cells),
    keyCells: merge(last?.keyStrategies?.cells, run.keyCells),
    releaseCells: merge(last?.releaseRules?.cells, run.releaseCells),
    answerCells: merge(last?.duplicateAnswers?.cells, run.answerCells),
    refundCells: merge(last?.refundKeys?.cells, run.refundCells),
    failoverCells: merge(last?.databaseFailover?.cells, run.failoverCells),
  };
}

type StoredMatrix = {
  cells?: CellRecord[];
  keyStrategies?: { cells?: CellRecord[] };
  releaseRules?: { cells?: CellRecord[] };
  duplicateAnswers?: { cells?: CellRecord[] };
  refundKeys?: { cells?: CellRecord[] };
  databaseFailover?: { cells?: CellRecord[] };
};

function lastMatrix(results: string): StoredMatrix | undefined {
  for (const file of [path.join(results, 'matrix.json'), path.join(ROOT, 'docs/scenario-matrix.json')]) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as StoredMatrix;
    } catch {
      // not there, or unreadable: the next
    }
  }
  return undefined;
}

const countOf = (all: AllCells) =>
  all.cells.length +
  all.keyCells.length +
  all.releaseCells.length +
  all.answerCells.length +
  all.refundCells.length +
  all.failoverCells.length;

type Outcome = { charges: Charges; sees: string };
const sameOutcome = (a: Outcome, b: Outcome) => a.charges === b.charges && a.sees === b.sees;

type AllCells = {
  cells: CellRecord[];
  keyCells: CellRecord[];
  releaseCells: CellRecord[];
  answerCells: CellRecord[];
  refundCells: CellRecord[];
  failoverCells: CellRecord[];
};

function matrixData({ cells, keyCells, releaseCells, answerCells, refundCells, failoverCells }: AllCells) {
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
    releaseRules: {
      layers: 'pendingUi token requestKey stateMachine uniqueConstraint',
      leaseMs: RELEASE_LEASE_MS,
      columns: RELEASE_COLUMNS,
      rows: RELEASE_ROWS.map(({ id, title, fault, why }) => ({ id, title, fault, why })),
      cells: sorted(RELEASE, releaseCells),
    },
    duplicateAnswers: {
      layers: 'all',
      columns: ANSWER_COLUMNS,
      rows: ANSWER_ROWS.map(({ id, title }) => ({ id, title })),
      cells: sorted(ANSWERS, answerCells),
    },
    refundKeys: {
      layers: 'all',
      columns: REFUND_KEY_COLUMNS,
      rows: REFUND_ROWS.map(({ id, title, channel, owedCents, why }) => ({ id, title, channel, owedCents, why })),
      cells: sorted(REFUNDS, refundCells),
    },
    databaseFailover: {
      columns: CONFIGURATIONS.map(({ id, title }) => ({ id, title })),
      rows: DATABASE_FAILOVER_ROWS.map(({ id, title, synchronous }) => ({ id, title, synchronous })),
      cells: sorted(DATABASE_FAILOVER, failoverCells),
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
  const refunds = cell.counts === 'refunds';
  const noun = refunds ? 'refund' : 'charge';
  // In bold what is wrong: a second charge, or a refund cell where the customer got back other than they are owed.
  const wrong = refunds ? !cell.actual.sees.endsWith('as owed') : cell.actual.charges === 'more';
  const count = cell.actual.charges === 'more' ? String(cell.actual.chargeCount) : cell.actual.charges;
  const charges = `${wrong ? `**${count}**` : count} ${noun}${count === '1' ? '' : 's'}`;
  const mark = cell.pass ? '' : ` ❌ expected ${cell.expected.charges}, ${dollars(cell.expected.sees)}`;
  // The requests an intent cost (the answer matrix), unless what the client saw says it already.
  const { requests, sees } = cell.actual;
  const cost = requests === undefined || sees.includes('requests') ? '' : ` (${requests} requests)`;
  return `${charges}, ${dollars(sees)}${cost}${mark}`;
}

/** "got 500 cents back, owed 1000 cents" as a reader says it: "got $5.00 back, owed $10.00". */
const dollars = (sees: string) =>
  sees.replace(/(\d+) cents/g, (_, cents: string) => `$${(Number(cents) / 100).toFixed(2)}`);

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
  { cells, keyCells, releaseCells, answerCells, refundCells, failoverCells }: AllCells,
  run?: { runAt: string; durationSeconds: number; machine: string },
): string {
  const failed = [...cells, ...keyCells, ...releaseCells, ...answerCells, ...refundCells, ...failoverCells].filter(
    (cell) => !cell.pass,
  ).length;
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
    '## When a claim is given back: three release rules',
    '',
    `The article’s third detail. Layers 0-4 are on, the bank’s key (5) off: it would return the first charge to a second one and hide what each rule did. The columns are the lab’s \`claims.release\`, with a lease of ${RELEASE_LEASE_MS} ms. The fault strikes the order’s first request; then its client retries with the same key until it is answered for good.`,
    '',
    table(RELEASE, releaseCells),
    '',
    ...RELEASE_ROWS.map((row) => `- ${row.title}: ${row.why}.`),
    '',
    '## What a duplicate is told: the first result, or an error',
    '',
    'The article’s second detail. Every defence is on; the columns are the lab’s `answers.duplicate`. The bank answers 4 s after charging; each of the five client recipes of docs/clients.md gives up on an attempt after 2.5 s and retries with its key (five retries at most). Told the first result, the client ends with its charge; told an error, it cannot tell it from “in progress” and spends its whole budget without learning it was charged.',
    '',
    table(ANSWERS, answerCells),
    '',
    '## Refunds: three ways of making a refund’s key',
    '',
    'The article’s first detail, its second half: an order may be refunded more than once, so the order number is the wrong key for a refund, and so is a hash of its parameters. Every defence is on; the columns are the lab’s `keys.refunds`. Each cell: the refunds the bank made, and what the customer got back against what they are owed (a $42.00 order).',
    '',
    table(REFUNDS, refundCells),
    '',
    ...REFUND_ROWS.map((row) => `- ${row.title}: ${row.why}.`),
    '',
    '## The database fails over: what a lost commit costs',
    '',
    'The Redis failover row’s mirror (docs/decisions/034-database-failover.md). PostgreSQL runs as a primary and a streaming replica under Patroni, reached through HAProxy; the bank keeps its books in a database of its own. Eight payments, one per configuration, wait at the bank (5 s) when the primary is killed; Patroni promotes the replica; each client retries with its key. Asynchronous: the replica had not received the payments’ claims (the test holds that window open), so layers 3 and 4 find the order unpaid. Synchronous: a commit returned only once the replica had it. `npm run scenarios` only.',
    '',
    table(DATABASE_FAILOVER, failoverCells),
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

function summary(shape: Shape, cells: CellRecord[], name: string, counted = 'charges'): string {
  const short = (cell: CellRecord | undefined) =>
    cell
      ? `${cell.pass ? ' ' : '✗'}${cell.actual.charges === 'more' ? String(cell.actual.chargeCount) : cell.actual.charges}`.padEnd(
          4,
        )
      : ' ·  ';
  const width = Math.max(...shape.rows.map((s) => s.title.length));
  const lines = [
    `${name} (${counted} per order; ✗ = differs from matrix.ts): ${cells.filter((c) => c.pass).length}/${cells.length} cells as declared`,
    `${''.padEnd(width)}  ${shape.columns.map((c) => c.id.slice(0, 4).padEnd(4)).join(' ')}`,
    ...shape.rows.map(
      (s) => `${s.title.padEnd(width)}  ${shape.columns.map((c) => short(find(cells, s.id, c.id))).join(' ')}`,
    ),
  ];
  return lines.join('\n');
}
