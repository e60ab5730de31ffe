// No function in lib/ and app/ (tests aside) runs over 80 lines: a function a reader cannot hold in view
// is several stories told as one. Counted on the parser's tree, from the first line of a function to its last.

import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse, sourceFiles } from './source-files.ts';

const MAX_LINES = 80;

/** Every function longer than `max` lines in the file, as "file:line name (N lines)". */
function longFunctions(source: ts.SourceFile, max = MAX_LINES): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > max) found.push(`${source.fileName}:${start + 1} ${nameOf(node)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

describe('function length', () => {
  it(`no function in lib/ and app/ is over ${MAX_LINES} lines`, () => {
    expect(sourceFiles('lib', 'app').flatMap((file) => longFunctions(parse(file)))).toEqual([]);
  });

  it('the check finds a long function', () => {
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const source = ts.createSourceFile(
      'x.ts',
      `function long() {\n${body}\n}\nconst short = () => 1;`,
      ts.ScriptTarget.Latest,
      true,
    );
    expect(longFunctions(source)).toEqual([`x.ts:1 long (${MAX_LINES + 2} lines)`]);
  });
});
