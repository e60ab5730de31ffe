// The integration tests share one PostgreSQL database (scripts/test.ts), and the race explorer's worlds live in it
// beside the others: orders whose claims have a lease of 100 ms on a clock of their own, which real time leaves
// behind. A sweep of every order (the reconciler's, with the real clock) run by another test takes those claims
// over mid-schedule, and the explorer then reports what no schedule did ("took over a live claim", not again when
// replayed): it happened beside a second test run, and with a sweep every 100 ms beside a loaded machine's random
// schedules, every run. So a test's sweep names its orders, unless its file makes a database of its own.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { parse, ROOT } from './source-files.ts';

/** The sweeps that act on every order of their database unless told which (`orderNos`). */
const SWEEPS = new Set(['reconcileStalePayments', 'reconcileStaleRefunds']);
/** A file that makes a database of its own sweeps nobody else's orders. */
const OWN_DATABASE = /\b(ownDatabase|freshDatabase)\(/;

/** Every test-side file: all of test/, and the test files elsewhere. */
function testFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string, all: boolean) => {
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const file = `${dir}/${name}`;
      if (name === 'node_modules' || file === 'lib/generated' || file === 'scripts/tmp') continue;
      if (statSync(path.join(ROOT, file)).isDirectory()) walk(file, all);
      else if (name.endsWith('.ts') && (all || name.endsWith('.test.ts'))) files.push(file);
    }
  };
  walk('test', true);
  for (const folder of ['lib', 'scripts', 'conformance', 'app']) walk(folder, false);
  return files.sort();
}

/** Each call of a sweep in `file` that does not name its orders, as "file:line". */
function unscopedSweeps(file: string): string[] {
  const source = parse(file);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && SWEEPS.has(node.expression.text)) {
      const [options] = node.arguments;
      const scoped =
        options !== undefined &&
        ts.isObjectLiteralExpression(options) &&
        options.properties.some((property) => property.name?.getText(source) === 'orderNos');
      if (!scoped) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it('every sweep a test runs on the shared database names its orders', () => {
  const files = testFiles().filter((file) => !OWN_DATABASE.test(readFileSync(path.join(ROOT, file), 'utf8')));
  // The check reads something: the explorer's worlds sweep, scoped, in these files.
  expect(files).toContain('test/races/world.ts');
  expect(files.flatMap(unscopedSweeps)).toEqual([]);
});
