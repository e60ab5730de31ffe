// The guides, the /scenarios page and the matrix's tables tell people which command reproduces what:
// `npm run scenarios -- -g "@double-click"`. Playwright's -g is a regular expression tried against a test's
// whole title path (project, file, describes, title, tags), so a pattern chosen by eye can select more than
// it says (`-g "token"` matches every "1 Token only" cell, in every row) or nothing at all. This lists the
// tests once (`--list` only loads the spec files: no web server, no browser) and checks each such pattern
// the way Playwright applies it:
//   - every row's command selects exactly that row's tests;
//   - every pattern in README.md and docs/ is a list of tags, and selects exactly the tests carrying them.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ANSWER_COLUMNS,
  ANSWER_ROWS,
  ANSWER_TAG,
  CLIENT_RESEND,
  CONFIGURATIONS,
  DATABASE_FAILOVER_ROWS,
  FULL_MATRIX_TAG,
  KEY_STRATEGY_COLUMNS,
  KEY_STRATEGY_ROWS,
  KEY_STRATEGY_TAG,
  REFUND_KEY_COLUMNS,
  REFUND_ROWS,
  REFUND_TAG,
  RELEASE_COLUMNS,
  RELEASE_ROWS,
  RELEASE_TAG,
  rowCommand,
  rowTag,
  SAMPLED_CONFIGURATIONS,
  SCENARIOS,
} from '../../e2e/scenarios/matrix';
import { DEEP_TAG, LEFT_TO_DEEP } from '../../e2e/tiers';
import { EXERCISES } from '../../lib/lab/exercises';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PROJECT = 'chromium';

/** One test as Playwright's grep sees it. */
type Listed = {
  id: string;
  /** The file as Playwright names it: relative to testDir (`scenarios/person.spec.ts`). */
  file: string;
  describes: string[];
  title: string;
  /** With their `@`: the describes' and the test's own. */
  tags: string[];
  /** The string -g is tried against. */
  grepTitle: string;
};

type JsonSpec = { id: string; title: string; tags: string[]; tests: Array<{ projectName: string }> };
type JsonSuite = { title: string; specs?: JsonSpec[]; suites?: JsonSuite[] };

/** `playwright test --list --reporter=json`, flattened. */
async function listTests(): Promise<Listed[]> {
  const env = { ...process.env };
  // Either would send the JSON report to a file instead of stdout.
  delete env.PLAYWRIGHT_JSON_OUTPUT_NAME;
  delete env.PLAYWRIGHT_JSON_OUTPUT_FILE;
  const { stdout } = await promisify(execFile)(
    path.join(ROOT, 'node_modules/.bin/playwright'),
    ['test', '--list', '--reporter=json', `--project=${PROJECT}`],
    { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 },
  );
  const report = JSON.parse(stdout) as { suites: JsonSuite[]; errors: unknown[] };
  expect(report.errors, 'Playwright could not load every spec file').toEqual([]);
  const tests: Listed[] = [];
  const walk = (suite: JsonSuite, file: string, describes: string[]) => {
    for (const spec of suite.specs ?? []) {
      if (!spec.tests.some((test) => test.projectName === PROJECT)) continue;
      const tags = spec.tags.map((tag) => `@${tag}`);
      // As TestCase._grepTitleWithTags(): the root suite's empty title, the project, the file, the describes,
      // the title, the tags. (Playwright puts a describe's tags right after its title; for a pattern without
      // spaces the place makes no difference, and the JSON report only has them all together.)
      const grepTitle = ['', PROJECT, file, ...describes, spec.title, ...tags].join(' ');
      tests.push({ id: spec.id, file, describes, title: spec.title, tags, grepTitle });
    }
    for (const child of suite.suites ?? []) walk(child, file, [...describes, child.title]);
  };
  for (const fileSuite of report.suites) walk(fileSuite, fileSuite.title, []);
  return tests;
}

/** As Playwright's forceRegExp(): `/re/flags` as written, anything else case-insensitive. */
function grepRegExp(pattern: string): RegExp {
  const literal = pattern.match(/^\/(.*)\/([gi]*)$/);
  return literal ? new RegExp(literal[1] ?? '', literal[2]) : new RegExp(pattern, 'gi');
}

function grep(tests: Listed[], pattern: string): Listed[] {
  const re = grepRegExp(pattern);
  return tests.filter((test) => {
    re.lastIndex = 0;
    return re.test(test.grepTitle);
  });
}

// What each command runs (scripts/test.ts): `npm run scenarios` passes e2e/scenarios, `npm run test:e2e` the
// whole chromium project.
const COMMANDS = {
  'npm run scenarios --': (test: Listed) => test.file.startsWith('scenarios/'),
  'npm run test:e2e --': () => true,
  'npx playwright test': () => true,
} as const;
type Command = keyof typeof COMMANDS;

type DocPattern = { where: string; command: Command | undefined; pattern: string };

/**
 * The -g / --grep patterns in a Markdown text, in code spans and fenced blocks: those after one of the commands,
 * and those of a code span that is only the pattern (`-g "@double-enter"`, right after a command's span), which
 * belong to the last command before them.
 */
function docPatterns(file: string, text: string): DocPattern[] {
  const found: DocPattern[] = [];
  const token =
    /(npm run scenarios --|npm run test:e2e --|npx playwright test)|(?<=^|\s)(?:-g|--grep)(?:=|\s+)("[^"]*"|'[^']*'|[^\s"'`]+)/g;
  let lastCommand: Command | undefined;
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return;
    }
    const codes = fenced ? [line] : [...line.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? '');
    for (const code of codes) {
      let command: Command | undefined;
      for (const match of code.matchAll(token)) {
        if (match[1]) {
          command = match[1] as Command;
          lastCommand = command;
          continue;
        }
        const alone = !fenced && /^\s*(-g|--grep)\b/.test(code);
        if (!command && !alone) continue; // some other program's -g (npm i -g …)
        const quoted = match[2] ?? '';
        const pattern = /^["']/.test(quoted) ? quoted.slice(1, -1) : quoted;
        found.push({ where: `${file}:${index + 1}`, command: command ?? lastCommand, pattern });
      }
    }
  });
  return found;
}

const TAG = /^@[a-z0-9][a-z0-9-]*$/;
/** A placeholder the reader fills in (`-g "@<scenario>"`): not a pattern to check. */
const PLACEHOLDER = /^@<[^>]+>$/;

function guides(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name));
  return ['README.md', ...docs.sort()];
}

const describeOf = (tests: Listed[]) => [...new Set(tests.map((test) => test.describes.join(' › ') || test.file))];

/** What is wrong with a guide's pattern, in words; undefined when it selects exactly the tests of its tags. */
function problemWith(tests: Listed[], { where, command, pattern }: DocPattern): string | undefined {
  const inScope = tests.filter(COMMANDS[command ?? 'npm run test:e2e --']);
  const selected = grep(inScope, pattern);
  const selects = `it selects ${selected.length} test(s) in ${describeOf(selected).length} describe(s)`;
  const tags = pattern.split('|');
  if (!tags.every((tag) => TAG.test(tag))) {
    return `${where}: -g "${pattern}" is not a list of tags: use a tag (-g "@tag", or "@a|@b"); ${selects}`;
  }
  if (selected.length === 0) return `${where}: -g "${pattern}" selects no test (after ${command ?? 'no command'})`;
  const tagged = tests.filter((test) => test.tags.some((tag) => tags.includes(tag)));
  const missing = tags.filter((tag) => !inScope.some((test) => test.tags.includes(tag)));
  if (missing.length > 0) return `${where}: no test ${command ? `that ${command} runs ` : ''}carries ${missing}`;
  const ids = (list: Listed[]) => list.map((test) => test.id).sort();
  if (ids(selected).join() !== ids(tagged).join()) {
    const extra = selected.filter((test) => !tagged.includes(test));
    const left = tagged.filter((test) => !selected.includes(test));
    return `${where}: -g "${pattern}" ${selects}, not just the tests tagged ${tags.join(' or ')}: also ${describeOf(extra).join('; ') || 'none'}; missing ${describeOf(left).join('; ') || 'none'}`;
  }
  return undefined;
}

let tests: Listed[] = [];
// Playwright loads and compiles every spec file to list them: about 20 s alone here, over 60 s beside a second
// test run (load 25), where a minute's guard failed the file.
beforeAll(async () => {
  tests = await listTests();
}, 180_000);

describe('the matrix rows', () => {
  const rows = [
    ...SCENARIOS.map((scenario) => ({
      scenario,
      // Its tests: one per cell, but one for a row run once for all its cells (a Redis failover, eight orders).
      runs: scenario.oneRun
        ? 1
        : CONFIGURATIONS.length +
          (KEY_STRATEGY_ROWS.some((row) => row.scenario.id === scenario.id) ? KEY_STRATEGY_COLUMNS.length - 1 : 0),
    })),
    { scenario: CLIENT_RESEND, runs: KEY_STRATEGY_COLUMNS.length },
    // The release-rule matrix: a row per fault, a cell per rule.
    ...RELEASE_ROWS.map((row) => ({ scenario: row, runs: RELEASE_COLUMNS.length })),
    // The answer matrix: a row per client recipe, a cell per answer.
    ...ANSWER_ROWS.map((row) => ({ scenario: row, runs: ANSWER_COLUMNS.length })),
    // The refund-key matrix: a row per scenario of refunds, a cell per way of making a refund's key.
    ...REFUND_ROWS.map((row) => ({ scenario: row, runs: REFUND_KEY_COLUMNS.length })),
    // The database-failover matrix: a row per replication mode, run once for its eight cells (`npm run scenarios`).
    ...DATABASE_FAILOVER_ROWS.map((row) => ({ scenario: row, runs: 1 })),
  ];

  it.each(rows)('$scenario.id: its command selects exactly its row', ({ scenario, runs }) => {
    const row = tests.filter((test) => test.describes.includes(`scenario: ${scenario.title}`));
    expect(row, `the describe "scenario: ${scenario.title}"`).toHaveLength(runs);
    expect(row.every((test) => test.tags.includes(rowTag(scenario.id)))).toBe(true);
    // The command as the page and the tables print it, read the way the guides are.
    const [printed, ...more] = docPatterns('rowCommand', `\`${rowCommand(scenario.id)}\``);
    expect(more).toEqual([]);
    expect(printed?.command).toBe('npm run scenarios --');
    const selected = grep(tests, printed?.pattern ?? '');
    expect(selected.map((test) => `${test.describes.join(' › ')} › ${test.title}`).sort()).toEqual(
      row.map((test) => `${test.describes.join(' › ')} › ${test.title}`).sort(),
    );
  });

  it('are every test of the matrix: nothing under e2e/scenarios runs outside a row', () => {
    const titles = new Set(rows.map(({ scenario }) => `scenario: ${scenario.title}`));
    // Save the workshop guide's exercise 10, which runs its commands against the cluster, and the test of the
    // cluster's nginx (it changes the one gateway's settings): both serially with the cluster's rows.
    const outside = tests.filter(
      (test) =>
        test.file.startsWith('scenarios/') &&
        !titles.has(test.describes[0] ?? '') &&
        !test.tags.includes('@guide') &&
        !test.tags.includes('@nginx'),
    );
    expect(outside.map((test) => `${test.file} › ${test.title}`)).toEqual([]);
  });

  it(`${KEY_STRATEGY_TAG} is on exactly the key-strategy cells that are runs of their own`, () => {
    const tagged = tests.filter((test) => test.tags.includes(KEY_STRATEGY_TAG));
    expect(tagged.map((test) => test.id).sort()).toEqual(
      tests
        .filter((test) => test.title.startsWith('key strategy: '))
        .map((test) => test.id)
        .sort(),
    );
    expect(tagged).toHaveLength(
      KEY_STRATEGY_ROWS.length * KEY_STRATEGY_COLUMNS.length - (KEY_STRATEGY_ROWS.length - 1),
    );
  });

  it(`${FULL_MATRIX_TAG} is on exactly the proof matrix's cells that npm test leaves out: its single-layer columns`, () => {
    const tagged = tests.filter((test) => test.tags.includes(FULL_MATRIX_TAG));
    const sampled = CONFIGURATIONS.filter(({ id }) => SAMPLED_CONFIGURATIONS.includes(id));
    // A misspelt id would tag every cell, and npm test would run none of the matrix's rows.
    expect(sampled.map(({ id }) => id)).toEqual([...SAMPLED_CONFIGURATIONS]);
    const ranApart = SCENARIOS.filter((scenario) => !scenario.oneRun);
    const left = CONFIGURATIONS.filter(({ id }) => !SAMPLED_CONFIGURATIONS.includes(id));
    expect(tagged.map((test) => `${test.describes.at(-1)} › ${test.title}`).sort()).toEqual(
      ranApart.flatMap((scenario) => left.map(({ title }) => `scenario: ${scenario.title} › ${title}`)).sort(),
    );
  });

  it(`${DEEP_TAG} is on exactly what e2e/tiers.ts says npm test leaves to the deep run, and npm test keeps a test of every file`, () => {
    const deep = tests.filter((test) => test.tags.includes(DEEP_TAG));
    const inChinese = tests.filter((test) => test.describes.some((title) => /in Chinese|\(zh-CN\)/.test(title)));
    const checkoutInChinese = (test: Listed) =>
      test.file === 'i18n.spec.ts' && (test.title.includes('checkout') || test.title.includes('double click'));
    const wrongKeys = KEY_STRATEGY_COLUMNS.filter(({ id }) => id !== 'business').map(({ title }) => title);
    const expected = [
      // The recovery storms, each under one layer alone.
      ...tests.filter((test) => test.file === 'recovery.spec.ts' && / times out of /.test(test.title)),
      // The key-strategy matrix's two wrong keys on the proof matrix's rows (the client-resend row stays).
      ...tests.filter(
        (test) =>
          test.tags.includes(KEY_STRATEGY_TAG) &&
          !test.tags.includes(rowTag(CLIENT_RESEND.id)) &&
          wrongKeys.some((title) => test.title === `key strategy: ${title}`),
      ),
      // The workshop's exercises but the first and the witnesses of a wrong key or answer.
      ...tests.filter((test) => test.file === 'workshop.spec.ts' && !/^exercise (1|12|14|15):/.test(test.title)),
      // The refund-key matrix's two wrong keys.
      ...tests.filter((test) => test.tags.includes(REFUND_TAG) && test.title !== REFUND_KEY_COLUMNS[0]?.title),
      // The answer matrix's second column.
      ...tests.filter((test) => test.tags.includes(ANSWER_TAG) && test.title === ANSWER_COLUMNS[1]?.title),
      // Everything in Chinese but i18n.spec.ts's checkout and double click.
      ...inChinese.filter((test) => !checkoutInChinese(test)),
    ];
    expect(deep.map((test) => test.id).sort()).toEqual(expected.map((test) => test.id).sort());
    expect(deep).toHaveLength(
      3 +
        (tests.filter((test) => test.file === 'workshop.spec.ts').length - 4) +
        2 * (KEY_STRATEGY_ROWS.length - 1) +
        2 * REFUND_ROWS.length +
        ANSWER_ROWS.length +
        inChinese.filter((t) => !checkoutInChinese(t)).length,
    );
    // npm test (`--grep-invert`) still runs a test of every spec file.
    const left = new RegExp(LEFT_TO_DEEP);
    const files = new Set(tests.map((test) => test.file));
    const kept = new Set(tests.filter((test) => !left.test(test.grepTitle)).map((test) => test.file));
    expect([...files].filter((file) => !kept.has(file) && file !== 'docs-screenshots.spec.ts')).toEqual([]);
  });

  it(`${RELEASE_TAG} is on exactly the release-rule matrix's cells`, () => {
    const tagged = tests.filter((test) => test.tags.includes(RELEASE_TAG));
    expect(tagged).toHaveLength(RELEASE_ROWS.length * RELEASE_COLUMNS.length);
    expect(tagged.every((test) => test.file === 'scenarios/release.spec.ts')).toBe(true);
  });

  it(`${ANSWER_TAG} is on exactly the answer matrix's cells`, () => {
    const tagged = tests.filter((test) => test.tags.includes(ANSWER_TAG));
    expect(tagged).toHaveLength(ANSWER_ROWS.length * ANSWER_COLUMNS.length);
    expect(tagged.every((test) => test.file === 'scenarios/answers.spec.ts')).toBe(true);
  });

  it(`${REFUND_TAG} is on exactly the refund-key matrix's cells`, () => {
    const tagged = tests.filter((test) => test.tags.includes(REFUND_TAG));
    expect(tagged).toHaveLength(REFUND_ROWS.length * REFUND_KEY_COLUMNS.length);
    expect(tagged.every((test) => test.file === 'scenarios/refunds.spec.ts')).toBe(true);
  });

  it("every exercise's scenarios are rows, so their commands run something", () => {
    const ids = new Set(rows.map(({ scenario }) => scenario.id));
    expect(EXERCISES.flatMap((exercise) => exercise.scenarios).filter((id) => !ids.has(id))).toEqual([]);
  });
});

describe('the commands in README.md and docs/', () => {
  const patterns = guides().flatMap((file) => docPatterns(file, readFileSync(path.join(ROOT, file), 'utf8')));

  it('are found (the guides name scenarios and tests to run)', () => {
    expect(patterns.filter(({ where }) => where.startsWith('docs/workshop.md')).length).toBeGreaterThan(10);
  });

  it('each select exactly the tests of the tags they name', () => {
    const problems = patterns
      .filter(({ pattern }) => !PLACEHOLDER.test(pattern))
      .map((found) => problemWith(tests, found))
      .filter((problem) => problem !== undefined);
    expect(problems).toEqual([]);
  });
});
