// The direction of dependency (README "Architecture"): app → lib/payments → lib/defences → the clients, and
// the lab as a reader of the business code, never the other way round. Checked on the import graph the
// compiler's parser reads, type-only imports included.
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles } from './source-files.ts';

const FILES = sourceFiles('lib', 'app');
const GRAPH = new Map(FILES.map((file) => [file, importsOf(file)]));

const inside = (file: string, ...places: string[]) =>
  places.some((place) => (place.endsWith('.ts') ? file === place : file.startsWith(`${place}/`)));

/** Every import from a file in `from` of a file in `of`, as "importer → imported". */
function importsBetween(from: string[], of: string[]): string[] {
  return [...GRAPH].flatMap(([file, imports]) =>
    inside(file, ...from)
      ? imports.filter((target) => inside(target, ...of)).map((target) => `${file} → ${target}`)
      : [],
  );
}

/** Every circle of imports, each once, as its files in order. */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('the direction of dependency', () => {
  it('the business code and the clients import nothing of the lab, of HTTP or of the routes', () => {
    const business = [
      'lib/defences',
      'lib/payments',
      'lib/refunds',
      'lib/events',
      'lib/telemetry',
      'lib/redis.ts',
      'lib/db.ts',
    ];
    expect(importsBetween(business, ['lib/lab', 'lib/http', 'app'])).toEqual([]);
  });

  it('the defences import nothing of the pipeline', () => {
    expect(importsBetween(['lib/defences'], ['lib/payments', 'lib/refunds'])).toEqual([]);
  });

  it('no circle of imports in lib/ and app/', () => {
    expect(circles(GRAPH).map((circle) => circle.join(' → '))).toEqual([]);
  });

  it('the check sees a circle and a wrong import when there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', []],
    ]);
    expect(circles(graph)).toEqual([['a', 'b', 'c', 'a']]);
    expect(GRAPH.get('lib/payments/pay.ts')?.length).toBeGreaterThan(5); // the graph is read, not empty
  });
});
