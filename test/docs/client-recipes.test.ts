// docs/clients.md shows each retrying-client recipe; e2e/api-client-recipes.spec.ts runs them. This keeps
// the two the same code: every recipe block of the doc is, line for line, the part of its file between
// `// recipe:start` and `// recipe:end`.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The lines between the file's one pair of markers, markers left out. */
function markedLines(source: string): string {
  const lines = source.split('\n');
  const starts = lines.flatMap((line, i) => (line.trim() === '// recipe:start' ? [i] : []));
  const ends = lines.flatMap((line, i) => (line.trim() === '// recipe:end' ? [i] : []));
  expect(starts, 'one // recipe:start').toHaveLength(1);
  expect(ends, 'one // recipe:end').toHaveLength(1);
  const [start = 0, end = 0] = [starts[0], ends[0]];
  expect(end).toBeGreaterThan(start + 1);
  return lines.slice(start + 1, end).join('\n');
}

/** The doc's recipe blocks, in order: the ```ts fence right after `<!-- recipe: <file> -->`. */
function docBlocks(doc: string): Array<[file: string, code: string]> {
  return [...doc.matchAll(/^<!-- recipe: (\S+) -->\n```ts\n([\s\S]*?)\n```$/gm)].map(([, file = '', code = '']) => [
    file,
    code,
  ]);
}

const doc = read('docs/clients.md');
const recipeFiles = readdirSync(path.join(ROOT, 'e2e/clients'))
  .filter((name) => name.endsWith('.ts'))
  .map((name) => `e2e/clients/${name}`)
  .sort();

describe('docs/clients.md', () => {
  it('shows one recipe for each file of e2e/clients/, and no other', () => {
    expect(recipeFiles).toEqual(['axios', 'fetch', 'got', 'ky', 'undici'].map((client) => `e2e/clients/${client}.ts`));
    expect(
      docBlocks(doc)
        .map(([file]) => file)
        .sort(),
    ).toEqual(recipeFiles);
    // Every fenced block marked as a recipe was parsed (a stray blank line would hide one).
    expect(doc.match(/<!-- recipe: /g)).toHaveLength(recipeFiles.length);
  });

  it.each(recipeFiles)('shows %s exactly as its marked lines', (file) => {
    const shown = docBlocks(doc).find(([shownFile]) => shownFile === file);
    expect(shown?.[1]).toBe(markedLines(read(file)));
  });
});
