// README.md and docs/**/*.md against the code, so that the docs cannot go stale:
//   - every count they state about the proof matrix, the key-strategy matrix, the scenarios and the exercises
//     (a table below: the file, the sentence with its numbers, and how each number is computed from
//     e2e/scenarios/matrix.ts, the scenario specs or lib/lab/exercises.ts), and the published tables and
//     docs/scenario-matrix.json hold the scenarios and configurations the code declares;
//   - every relative link resolves to a file of the repository (a clone has nothing outside it), and an
//     anchor to a heading of the target;
//   - every repository path named in inline code exists (decision records' `Governs:` lines included).
// Not checked: the README's "Measured on …" paragraph (timings and the test counts of one run are
// measurements, not claims about the matrix), counts of things other than scenarios, cells, rows, columns,
// configurations and exercises (requests in a guide's command, races, benchmark figures), and paths written
// without inline code or with placeholders (`<locale>`, `NNN`, `*`, `…`).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CASES } from '../../conformance/cases';
import { WITHOUT_DEFENCES } from '../../conformance/demo-adapter';
import {
  ANSWER_ROWS,
  CONFIGURATIONS,
  DATABASE_FAILOVER_ROWS,
  expectedCell,
  KEY_STRATEGY_COLUMNS,
  KEY_STRATEGY_ROWS,
  REFUND_KEY_COLUMNS,
  REFUND_ROWS,
  RELEASE_ROWS,
  SCENARIOS,
  SWITCHES,
} from '../../e2e/scenarios/matrix';
import { EXERCISES } from '../../lib/lab/exercises';
import { onlyLayers } from '../../lib/lab/settings';
import { NUMBER_WORDS } from './number-words.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** README.md and every markdown file under docs/, as paths relative to the repository. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const file = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) return walk(file);
      return entry.name.endsWith('.md') ? [file] : [];
    });
  return ['README.md', ...walk('docs')];
}
const FILES = markdownFiles();

/** A file's prose: fenced code blocks blanked (a link or a path in a shell block is not the docs' claim). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '));
}

// --- Counts -----------------------------------------------------------------------------------------------

const ENGLISH: readonly string[] = NUMBER_WORDS;
const CHINESE_DIGITS: Record<string, number> = {
  零: 0,
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};

/** 17, 1,000, "seventeen", "Seventeen", 十七, 二十, 八. */
function numberOf(text: string): number {
  if (/^[0-9][0-9,]*$/.test(text)) return Number(text.replace(/,/g, ''));
  const english = ENGLISH.indexOf(text.toLowerCase());
  if (english >= 0) return english;
  const [tens, units] = text.includes('十') ? text.split('十') : ['', text];
  const digit = (part: string | undefined, empty: number) => (part ? (CHINESE_DIGITS[part] ?? Number.NaN) : empty);
  return text.includes('十') ? digit(tens, 1) * 10 + digit(units, 0) : digit(units, Number.NaN);
}

/** Where a sentence states a number: digits, an English word, or Chinese numerals. */
const N = `([0-9][0-9,]*|${ENGLISH.join('|')}|[零一二两三四五六七八九十]+)`;

// What the numbers are, computed from the code.
const scenarioIdsOf = (spec: string) => [...read(spec).matchAll(/^scenario\('([\w-]+)'/gm)].map((match) => match[1]);
const cells = SCENARIOS.length * CONFIGURATIONS.length;
const inProofMatrix = KEY_STRATEGY_ROWS.filter((row) => SCENARIOS.includes(row.scenario));
/** The key-strategy cells that are runs of their own: the business column of a proof-matrix row is its cell. */
const keyOwnRuns = KEY_STRATEGY_ROWS.reduce(
  (sum, row) => sum + KEY_STRATEGY_COLUMNS.length - (SCENARIOS.includes(row.scenario) ? 1 : 0),
  0,
);
const exercises = new Set(EXERCISES.map((exercise) => exercise.id.replace(/[a-z]$/, ''))).size;
const clusterRows = scenarioIdsOf('e2e/scenarios/cluster.spec.ts').length;
const recoveryRows = scenarioIdsOf('e2e/scenarios/recovery.spec.ts').length;
const oneRunRows = SCENARIOS.filter((scenario) => scenario.oneRun).length;
const burst = Number(read('e2e/scenarios/infrastructure.spec.ts').match(/^const N = (\d+);/m)?.[1]);
const sources = new Set(SCENARIOS.map((scenario) => scenario.source));
const latencies = SCENARIOS.map((scenario) => scenario.bankLatencyMs);

type Claim = {
  file: string;
  /** The sentence, whitespace collapsed; `{n}` where it states a number. */
  sentence: string;
  /** One value per `{n}`, in order. */
  values: number[];
};

const CLAIMS: Claim[] = [
  { file: 'README.md', sentence: 'a burst of {n} concurrent API requests', values: [burst] },
  {
    file: 'README.md',
    sentence: 'Each of the {n} runs under {n} configurations',
    values: [SCENARIOS.length, CONFIGURATIONS.length],
  },
  {
    file: 'README.md',
    sentence: 'the failover strikes its {n} orders at once, in one test): {n} cells',
    values: [CONFIGURATIONS.length, cells],
  },
  {
    file: 'README.md',
    sentence:
      'runs {n} of them and {n} of its own (an HTTP client that resends the same bytes) with layer 2 alone under {n} ways of making its key: {n} cells, {n} of them runs of their own',
    values: [
      inProofMatrix.length,
      KEY_STRATEGY_ROWS.length - inProofMatrix.length,
      KEY_STRATEGY_COLUMNS.length,
      KEY_STRATEGY_ROWS.length * KEY_STRATEGY_COLUMNS.length,
      keyOwnRuns,
    ],
  },
  { file: 'README.md', sentence: 'runs the {n} wrong columns', values: [KEY_STRATEGY_COLUMNS.length - 1] },
  { file: 'README.md', sentence: 'turns this into {n} exercises', values: [exercises] },
  {
    file: 'README.md',
    sentence:
      'the {n}-cell scenario matrix ({n} scenarios × {n} configurations), {n} rows of it through a real cluster',
    values: [cells, SCENARIOS.length, CONFIGURATIONS.length, clusterRows],
  },
  { file: 'README.md', sentence: '{n} through a Redis failover that its spec stages', values: [oneRunRows] },
  {
    file: 'README.md',
    sentence: 'the key-strategy matrix ({n} scenarios × {n} strategies)',
    values: [KEY_STRATEGY_ROWS.length, KEY_STRATEGY_COLUMNS.length],
  },
  {
    file: 'README.md',
    sentence: 'the refund-key matrix ({n} scenarios × {n} keys',
    values: [REFUND_ROWS.length, REFUND_KEY_COLUMNS.length],
  },
  {
    file: 'docs/decisions/032-refunds.md',
    sentence: '{n} × {n} = {n} cells',
    values: [REFUND_ROWS.length, REFUND_KEY_COLUMNS.length, REFUND_ROWS.length * REFUND_KEY_COLUMNS.length],
  },
  { file: 'docs/workshop.md', sentence: '{n} exercises, about two hours', values: [exercises] },
  { file: 'docs/workshop.md', sentence: '(a service call has neither), {n} charges', values: [burst] },
  {
    file: 'docs/workshop.md',
    sentence: 'one failover, {n} orders, one per configuration',
    values: [CONFIGURATIONS.length],
  },
  { file: 'docs/workshop.zh-CN.md', sentence: '{n}个练习，大约两个小时', values: [exercises] },
  { file: 'docs/workshop.zh-CN.md', sentence: '（服务调用两者都没有）， {n}笔扣款', values: [burst] },
  {
    file: 'docs/workshop.zh-CN.md',
    sentence: '一次故障转移，{n}个订单，每种配置一个',
    values: [CONFIGURATIONS.length],
  },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: '{n} switches: the pending UI',
    values: [SWITCHES.length],
  },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: '{n} configurations: all on, each switch alone, all off',
    values: [CONFIGURATIONS.length],
  },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: '{n} scenarios, each with its source',
    values: [SCENARIOS.length],
  },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: '{n} × {n} = {n} cells',
    values: [SCENARIOS.length, CONFIGURATIONS.length, cells],
  },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: 'one failover strikes its {n} orders',
    values: [CONFIGURATIONS.length],
  },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: 'one run recorded all {n} cells and the {n} of the key-strategy matrix',
    values: [cells, KEY_STRATEGY_ROWS.length * KEY_STRATEGY_COLUMNS.length],
  },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: '{n} rows run through a real cluster',
    values: [clusterRows],
  },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: '{n} runs through a real Redis Sentinel topology',
    values: [oneRunRows],
  },
  { file: 'docs/decisions/009-proof-matrix.md', sentence: '{n} rows are the recovery path', values: [recoveryRows] },
  { file: 'docs/decisions/009-proof-matrix.md', sentence: 'all {n} duplicates agreed on', values: [burst - 1] },
  {
    file: 'docs/decisions/009-proof-matrix.md',
    sentence: 'bank latencies of {n}-{n} ms',
    values: [Math.min(...latencies.filter((ms) => ms > 0)), Math.max(...latencies)],
  },
  {
    file: 'docs/decisions/011-cluster-gateway-events.md',
    sentence: "{n} of the article's {n} sources of duplicates come from machines",
    values: [[...sources].filter((source) => source !== 1).length, sources.size],
  },
  {
    file: 'docs/decisions/014-key-strategies-and-exact-answers.md',
    sentence: '{n} scenarios × {n} strategies',
    values: [KEY_STRATEGY_ROWS.length, KEY_STRATEGY_COLUMNS.length],
  },
  {
    file: 'docs/decisions/014-key-strategies-and-exact-answers.md',
    sentence: 'the other {n} cells run on their own orders',
    values: [keyOwnRuns],
  },
  {
    file: 'docs/decisions/019-redis-failover.md',
    sentence: '{n} payments, one per configuration',
    values: [CONFIGURATIONS.length],
  },
  {
    file: 'docs/decisions/019-redis-failover.md',
    sentence: "serves the row's {n} cells",
    values: [CONFIGURATIONS.length],
  },
  {
    file: 'docs/decisions/021-nginx-gateway.md',
    sentence: 'The {n} cluster rows of the matrix',
    values: [clusterRows],
  },
  {
    file: 'docs/conformance.md',
    sentence: 'On this demo with every defence on, all {n} cases pass',
    values: [CASES.length],
  },
  {
    file: 'docs/conformance.md',
    sentence: 'every duplicate charges again: the other {n} fail',
    values: [Object.values(WITHOUT_DEFENCES).filter((status) => status === 'fail').length],
  },
];

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Whitespace collapsed, and dropped where a line break falls beside Chinese text. */
const flat = (markdown: string) =>
  markdown.replace(/\s+/g, ' ').replace(/(?<=[\u3000-\u9fff\uff00-\uffef]) | (?=[\u3000-\u9fff\uff00-\uffef])/g, '');

describe('the counts README and docs state', () => {
  it.each(CLAIMS.map((claim) => [claim.file, claim.sentence, claim] as const))('%s: "%s"', (file, _, claim) => {
    const pattern = new RegExp(flat(claim.sentence).split('{n}').map(literal).join(N), 'gi');
    const found = [...flat(read(file)).matchAll(pattern)];
    expect(found.length, `"${claim.sentence}" is no longer in ${file}: update this table`).toBeGreaterThan(0);
    for (const match of found) {
      expect(match.slice(1).map(numberOf), `${file}: "${match[0]}"`).toEqual(claim.values);
    }
  });

  // Claims in words about whole columns of the matrix: the sentence, and whether the declaration bears it out.
  it.each([
    {
      file: 'docs/decisions/006-layer-4-unique-constraint.md',
      sentence: 'With layer 4 alone, every scenario in the matrix ends with one charge',
      holds: SCENARIOS.every((s) => expectedCell(s, onlyLayers('uniqueConstraint')).charges === '1'),
    },
    {
      file: 'docs/decisions/004-layer-2-request-key.md',
      sentence:
        'It does not stop two sessions, or two keys, paying the same order (the two-tabs scenario). Layers 3, 4 and 5 do.',
      holds:
        Object.keys(SCENARIOS.find((s) => s.id === 'two-tabs')?.stoppedBy ?? {}).join() ===
        'stateMachine,uniqueConstraint,bankKey',
    },
  ])('$file: "$sentence"', ({ file, sentence, holds }) => {
    expect(flat(read(file)), `"${sentence}" is no longer in ${file}: update this table`).toContain(flat(sentence));
    expect(holds, `${file}: "${sentence}" is not what e2e/scenarios/matrix.ts declares`).toBe(true);
  });

  it('publishes the tables and data of the scenarios and configurations the code declares', () => {
    const data = JSON.parse(read('docs/scenario-matrix.json')) as {
      configurations: Array<{ id: string }>;
      scenarios: Array<{ id: string }>;
      cells: unknown[];
      keyStrategies: { columns: Array<{ id: string }>; rows: Array<{ id: string }> };
    };
    const again = 'the published matrix is not the declared one: `npm run scenarios` publishes it again';
    expect(
      data.configurations.map((c) => c.id),
      again,
    ).toEqual(CONFIGURATIONS.map((c) => c.id));
    expect(
      data.scenarios.map((s) => s.id),
      again,
    ).toEqual(SCENARIOS.map((s) => s.id));
    expect(data.cells, again).toHaveLength(cells);
    expect(
      data.keyStrategies.columns.map((c) => c.id),
      again,
    ).toEqual(KEY_STRATEGY_COLUMNS.map((c) => c.id));
    expect(
      data.keyStrategies.rows.map((r) => r.id),
      again,
    ).toEqual(KEY_STRATEGY_ROWS.map((r) => r.scenario.id));
    // The tables' rows, by their reproduce tag: the README's blocks and docs/scenario-matrix.md.
    const tags = (table: string) => [...table.matchAll(/^\|.*`-g "@([\w-]+)"` \|$/gm)].map((match) => match[1]);
    const block = (name: string) =>
      read('README.md').match(new RegExp(`<!-- ${name}:start -->([\\s\\S]*?)<!-- ${name}:end -->`))?.[1] ?? '';
    expect(tags(block('scenario-matrix')), again).toEqual(SCENARIOS.map((s) => s.id));
    expect(tags(block('key-strategy-matrix')), again).toEqual(KEY_STRATEGY_ROWS.map((r) => r.scenario.id));
    expect(tags(block('release-rule-matrix')), again).toEqual(RELEASE_ROWS.map((r) => r.id));
    expect(tags(block('duplicate-answer-matrix')), again).toEqual(ANSWER_ROWS.map((r) => r.id));
    expect(tags(block('refund-key-matrix')), again).toEqual(REFUND_ROWS.map((r) => r.id));
    expect(tags(block('database-failover-matrix')), again).toEqual(DATABASE_FAILOVER_ROWS.map((r) => r.id));
    expect(tags(read('docs/scenario-matrix.md')), again).toEqual([
      ...SCENARIOS.map((s) => s.id),
      ...KEY_STRATEGY_ROWS.map((r) => r.scenario.id),
      ...RELEASE_ROWS.map((r) => r.id),
      ...ANSWER_ROWS.map((r) => r.id),
      ...REFUND_ROWS.map((r) => r.id),
      ...DATABASE_FAILOVER_ROWS.map((r) => r.id),
    ]);
  });
});

// --- Links ------------------------------------------------------------------------------------------------

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes; repeats get -1, -2. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+?)#*$/gm)) {
    const slug = (heading ?? '')
      .trim()
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    anchors.add(count ? `${slug}-${count}` : slug);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/** The markdown links and images of a file's prose: `[text](target)`, `![alt](target "title")`. */
const linksOf = (markdown: string) =>
  [...prose(markdown).matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map((match) => match[1] ?? '');

describe('the relative links of README and docs', () => {
  it.each(FILES)('%s links only to files of the repository, and to headings they have', (file) => {
    const dead: string[] = [];
    for (const target of linksOf(read(file))) {
      if (/^(https?|mailto):/i.test(target)) continue;
      const [pathPart = '', anchor] = target.split('#');
      const resolved = pathPart ? path.resolve(ROOT, path.dirname(file), decodeURI(pathPart)) : path.join(ROOT, file);
      const inside = !path.relative(ROOT, resolved).startsWith('..');
      if (!inside || !existsSync(resolved)) {
        dead.push(`${target}${inside ? '' : ' (outside the repository: a clone has no such file)'}`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
        dead.push(`${target} (no such heading)`);
      }
    }
    expect(dead).toEqual([]);
  });
});

// --- Paths ------------------------------------------------------------------------------------------------

const PATH_PREFIXES = ['app/', 'lib/', 'e2e/', 'test/', 'scripts/', 'docs/', 'prisma/', 'bench/', 'messages/'];
/** Written at run time, ignored by git: a clone does not have them until something runs. */
const RUNTIME = ['.data/', 'e2e/.results/', 'lib/generated/', 'test-results/', 'playwright-report/'];

/** The inline code spans of a file's prose that name a repository path; `{json,md}` expanded. */
function pathsOf(markdown: string): string[] {
  const spans = [...prose(markdown).matchAll(/(?<!`)`([^`\n]+)`(?!`)/g)].map((match) => (match[1] ?? '').trim());
  return (
    spans
      .filter(
        (span) =>
          !/[\s<>*…]|NNN/.test(span) &&
          (PATH_PREFIXES.some((prefix) => span.startsWith(prefix)) ||
            (span.includes('/') && /\.(ts|tsx|md|lua|json|sql|css)$/.test(span))),
      )
      // A URL (`/api/openapi.json`, `redis://…`) is not a file.
      .filter((span) => !/^([a-z]+:\/\/|\/)/i.test(span) && !RUNTIME.some((prefix) => span.startsWith(prefix)))
      .flatMap((span) => {
        const braces = span.match(/^(.*)\{([^}]+)\}(.*)$/);
        return braces ? (braces[2] ?? '').split(',').map((part) => `${braces[1]}${part}${braces[3]}`) : [span];
      })
  );
}

describe('the paths README and docs name', () => {
  it.each(FILES)('%s names only paths that exist', (file) => {
    const missing = pathsOf(read(file)).filter((named) => {
      const resolved = path.join(ROOT, named.replace(/:\d+$/, ''));
      return !existsSync(resolved) || (named.endsWith('/') && !statSync(resolved).isDirectory());
    });
    expect(missing).toEqual([]);
  });
});

describe('the decision records', () => {
  const records = FILES.filter((file) => /^docs\/decisions\/\d{3}-/.test(file));

  it.each(records)('%s names the code it governs, near the top', (file) => {
    const top = read(file).split(/^## /m)[0] ?? '';
    const governs = top.match(/^Governs: ([\s\S]*?)(?:\n\n|$)/m)?.[1] ?? '';
    // The paths are held to exist by the check above; here, that there are some.
    expect(pathsOf(governs).length, `${file}: a "Governs:" line naming files or folders`).toBeGreaterThan(0);
  });
});
