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

describe('the pipeline is a list of defences', () => {
  it('lib/payments/pay.ts has no function over 80 lines', () => {
    const long = functionsOf('lib/payments/pay.ts').filter((fn) => fn.lines > 80);
    expect(long).toEqual([]);
  });

  it('lib/payments/pay.ts names no layer and reads no switch: the list comes from defencesFor', () => {
    const named = stringsOf('lib/payments/pay.ts').filter((text) => (LAYERS as readonly string[]).includes(text));
    expect(named).toEqual([]);
    expect(read('lib/payments/pay.ts')).not.toMatch(
      /layers\.(token|requestKey|stateMachine|uniqueConstraint|bankKey)\b/,
    );
  });

  it("lib/payments/pay.ts imports no defence's own folder: it runs the list, under the contract", () => {
    const source = ts.createSourceFile('pay.ts', read('lib/payments/pay.ts'), ts.ScriptTarget.Latest, true);
    const imported = source.statements
      .filter(ts.isImportDeclaration)
      .map((statement) => (statement.moduleSpecifier as ts.StringLiteral).text);
    // A defence's folder (lib/defences/<defence>/…) is its own: its key, its statements, its rules.
    expect(imported.filter((from) => /^\.\.\/defences\/[^/]+\//.test(from))).toEqual([]);
  });

  it('lib/payments/pay.ts enters a defence by its guard alone: the claim ends inside it, not by a call back', () => {
    const source = ts.createSourceFile('pay.ts', read('lib/payments/pay.ts'), ts.ScriptTarget.Latest, true);
    const called: string[] = [];
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        called.push(node.expression.name.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    // The contract's own verbs: `guard` once per defence; a lease's `renew`, only after a pause, is the one
    // way back into a defence (lib/defences/defence.ts). The claim/settle/stopped of a hold were the old way.
    expect(called.filter((name) => name === 'guard').length).toBeGreaterThan(0);
    expect(called.filter((name) => ['claim', 'settle', 'stopped', 'complete', 'release'].includes(name))).toEqual([]);
    expect(called.filter((name) => name === 'renew')).toHaveLength(1);
  });

  it('each defence says, at its top, what a duplicate stopped there gets and when its claim is given back', () => {
    for (const file of [
      'lib/defences/checkout-token/defence.ts',
      'lib/defences/request-key/defence.ts',
      'lib/defences/order-claim/defence.ts',
      'lib/defences/bank-key/defence.ts',
    ]) {
      const header = read(file).split('\nimport ')[0] ?? '';
      expect(header, file).toMatch(/What a duplicate stopped here gets/);
      expect(header, file).toMatch(/When the (claim|row) is given back|Its claim:/);
    }
  });
});
