// The pipeline reads like the article (decision 023): lib/payments/pay.ts runs the list of defences it is given,
// names no layer, and no function in it is over 80 lines. Each defence's module says what a duplicate stopped
// there gets and when its claim is given back. Checked on the source, so a change that threads a layer back
// through the pipeline fails here before review.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../../lib/lab/settings.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Every function in a source file (declarations, methods, arrows, expressions) with its length in lines. */
function functionsOf(file: string): Array<{ name: string; lines: number }> {
  const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  const found: Array<{ name: string; lines: number }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : `(anonymous, line ${start + 1})`;
      found.push({ name, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The string literals in a source file (comments are not literals). */
function stringsOf(file: string): string[] {
  const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node)) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Each pipeline, and the runner they share (lib/payments/guarded.ts: the defences around the bank). */
const PIPELINES = ['lib/payments/pay.ts', 'lib/refunds/refund.ts'] as const;
const RUNNER = 'lib/payments/guarded.ts';

/** The names of the methods a source file calls (`defence.guard(…)`: guard). */
function methodsCalledIn(file: string): string[] {
  const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  const called: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      called.push(node.expression.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return called;
}

describe('the pipeline is a list of defences', () => {
  for (const file of [...PIPELINES, RUNNER]) {
    it(`${file} has no function over 80 lines`, () => {
      const long = functionsOf(file).filter((fn) => fn.lines > 80);
      expect(long).toEqual([]);
    });

    it(`${file} names no layer and reads no switch: the list comes from the defences' own list`, () => {
      const named = stringsOf(file).filter((text) => (LAYERS as readonly string[]).includes(text));
      expect(named).toEqual([]);
      expect(read(file)).not.toMatch(/layers\.(token|requestKey|stateMachine|uniqueConstraint|bankKey)\b/);
    });

    it(`${file} imports no defence's own folder: it runs the list, under the contract`, () => {
      const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
      const imported = source.statements
        .filter(ts.isImportDeclaration)
        .map((statement) => (statement.moduleSpecifier as ts.StringLiteral).text);
      // A defence's folder (lib/defences/<defence>/…) is its own: its key, its statements, its rules.
      expect(imported.filter((from) => /^\.\.\/defences\/[^/]+\//.test(from))).toEqual([]);
    });
  }

  for (const file of PIPELINES) {
    it(`${file} enters a defence by its guard alone: the claim ends inside it, not by a call back`, () => {
      // The pipeline with the runner it uses: the contract's own verbs, `guard` once per defence; a lease's
      // `renew`, only after a pause, is the one way back into a defence (lib/defences/defence.ts). The
      // claim/settle/stopped of a hold were the old way.
      const called = [...methodsCalledIn(file), ...methodsCalledIn(RUNNER)];
      expect(called.filter((name) => name === 'guard').length).toBeGreaterThan(0);
      expect(called.filter((name) => ['claim', 'settle', 'stopped', 'complete', 'release'].includes(name))).toEqual([]);
      expect(called.filter((name) => name === 'renew')).toHaveLength(1);
    });
  }

  it('each defence says, at its top, what a duplicate stopped there gets and when its claim is given back', () => {
    for (const file of [
      'lib/defences/checkout-token/defence.ts',
      'lib/defences/request-key/defence.ts',
      'lib/defences/order-claim/defence.ts',
      'lib/defences/bank-key/defence.ts',
      'lib/defences/refund-claim/defence.ts',
    ]) {
      const header = read(file).split('\nimport ')[0] ?? '';
      expect(header, file).toMatch(/What a duplicate stopped here gets/);
      expect(header, file).toMatch(/When the (claim|row) is given back|Its claim:/);
    }
  });
});
