// The names of the tests that failed, read from the JSON reports vitest and Playwright write beside their own
// output, so that `npm test` ends by naming them: a CI log is often read from its tail, where the proof
// matrix and the summary are, and a failure named a thousand lines up is one nobody finds. Each name is followed
// by the first lines of its error (what was expected and what came), so that a tail shows why as well as what.
import { readFileSync } from 'node:fs';

type VitestReport = {
  testResults?: Array<{
    name: string;
    status: string;
    message?: string;
    assertionResults?: Array<{ fullName: string; status: string; failureMessages?: string[] }>;
  }>;
};

type PlaywrightSuite = {
  title: string;
  file?: string;
  specs?: Array<{
    title: string;
    line?: number;
    tests: Array<{ status: string; results?: Array<{ errors?: Array<{ message?: string }> }> }>;
  }>;
  suites?: PlaywrightSuite[];
};
type PlaywrightReport = { suites?: PlaywrightSuite[]; errors?: Array<{ message?: string }> };

/** How many of an error's first lines follow a failed test's name, and how long each may be. */
const WHY_LINES = 4;
const WHY_WIDTH = 200;

/** The first non-empty lines of an error message, without its terminal colours, indented under the test's name. */
export function why(message: string | undefined): string {
  const lines = (message ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape that starts a terminal colour
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .slice(0, WHY_LINES)
    .map((line) => `\n      ${line.length > WHY_WIDTH ? `${line.slice(0, WHY_WIDTH)}…` : line}`);
  return lines.join('');
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** `file › test` for every failed vitest test, and the file alone where the file failed before its tests. */
export function vitestFailures(file: string, root: string): string[] {
  const report = readJson<VitestReport>(file);
  const failed: string[] = [];
  for (const result of report?.testResults ?? []) {
    const where = result.name.startsWith(root) ? result.name.slice(root.length + 1) : result.name;
    const tests = (result.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of tests) failed.push(`${where} › ${test.fullName}${why(test.failureMessages?.[0])}`);
    if (tests.length === 0 && result.status === 'failed') {
      failed.push(`${where}: ${(result.message ?? 'failed').split('\n')[0]}`);
    }
  }
  return failed;
}

/** `e2e/file:line › describe › test` for every Playwright test that failed (or passed only on a retry). */
export function playwrightFailures(file: string, testDir = 'e2e'): string[] {
  const report = readJson<PlaywrightReport>(file);
  const failed: string[] = [];
  // The top suites are the files (their title is the file's path under testDir); below them, the describes.
  const walk = (suite: PlaywrightSuite, titles: string[], where: string) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests) {
        if (test.status === 'unexpected' || test.status === 'flaky') {
          const error = test.results?.flatMap((result) => result.errors ?? [])[0];
          const name = `${testDir}/${where}:${spec.line ?? '?'} › ${[...titles, spec.title].join(' › ')}`;
          failed.push(`${name}${why(error?.message)}`);
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title], where);
  };
  for (const suite of report?.suites ?? []) walk(suite, [], suite.file ?? suite.title);
  for (const error of report?.errors ?? []) failed.push(`(outside any test) ${(error.message ?? '').split('\n')[0]}`);
  return failed;
}
