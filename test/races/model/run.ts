// `npm run races`, its first part: the model checker over every configuration the matrix declares safe, on
// worker threads. Prints, per configuration, the bound reached (casts, states, interleavings, ends, ordered pairs
// of race points) and its violations; writes the traces the real code is then held to (test/races/conformance.ts)
// to the file named by --out. Exits non-zero on a violation.
//   node --import tsx test/races/model/run.ts --out .data/races/model-traces.json [--only 2+3+4,5]
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { safeConfigurations } from './bound.ts';
import { type Move, replay } from './checker.ts';
import { runExhaustive } from './exhaustive.ts';

export type TraceFile = {
  /** Per configuration: the traces to replay (one per ordered pair of points reached, and some of every end). */
  configurations: Array<{ name: string; traces: Array<{ cast: number; why: string; moves: Move[] }>; pairs: string[] }>;
  /** The casts, by index. */
  casts: Array<import('./checker.ts').Cast>;
};

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : undefined;
}

async function main(): Promise<number> {
  const out = argument('--out');
  const only = argument('--only');
  const configurations = safeConfigurations().filter(
    (configuration) => !only || only.split(',').includes(configuration.name),
  );
  const started = performance.now();
  const results = await runExhaustive({ configurations });
  const seconds = (performance.now() - started) / 1000;
  const file: TraceFile = { configurations: [], casts: [] };
  let violations = 0;
  console.log(
    `\n[model] every interleaving, per configuration declared safe (test/races/model/bound.ts; ${seconds.toFixed(0)} s):`,
  );
  console.log(
    `[model] ${'layers'.padEnd(8)} ${'casts'.padStart(5)} ${'states'.padStart(10)} ${'interleavings'.padStart(14)} ${'ends'.padStart(10)} ${'pairs'.padStart(6)}  violations`,
  );
  for (const result of results) {
    const ends = result.casts.reduce((sum, cast) => sum + cast.ends, 0);
    console.log(
      `[model] ${result.configuration.name.padEnd(8)} ${String(result.casts.length).padStart(5)} ${String(result.states).padStart(10)} ${result.interleavings.toExponential(2).padStart(14)} ${String(ends).padStart(10)} ${String(result.pairs.size).padStart(6)}  ${result.violations.length}`,
    );
    // The traces the real code follows: few, covering every pair of points the model reached (greedily, each
    // trace by the pairs it reaches run to its end), and each cast's deepest end.
    const traces: TraceFile['configurations'][number]['traces'] = [];
    const candidates: Array<{ cast: number; why: string; moves: Move[]; pairs: Set<string> }> = [];
    for (const cast of result.casts) {
      const index = file.casts.push(cast.cast) - 1;
      for (const [why, moves] of cast.witnesses) {
        if (why.startsWith('pair '))
          candidates.push({ cast: index, why, moves, pairs: replay(cast.cast, moves).pairs });
      }
      const [deepest] = cast.witnesses
        .filter(([why]) => why.startsWith('end '))
        .sort((a, b) => b[1].length - a[1].length);
      if (deepest) traces.push({ cast: index, why: deepest[0], moves: deepest[1] });
    }
    const uncovered = new Set(result.pairs);
    while (uncovered.size > 0) {
      let best: (typeof candidates)[number] | undefined;
      let gain = 0;
      for (const candidate of candidates) {
        let covers = 0;
        for (const pair of candidate.pairs) if (uncovered.has(pair)) covers++;
        if (covers > gain) [best, gain] = [candidate, covers];
      }
      if (!best) break;
      for (const pair of best.pairs) uncovered.delete(pair);
      traces.push({ cast: best.cast, why: best.why, moves: best.moves });
    }
    file.configurations.push({ name: result.configuration.name, traces, pairs: [...result.pairs].sort() });
    for (const violation of result.violations) {
      violations++;
      console.log(
        `[model] VIOLATION ${result.configuration.name}: ${violation.cast}\n  ${violation.end.violations.join('\n  ')}\n  moves: ${JSON.stringify(violation.moves)}`,
      );
    }
  }
  const total = results.reduce((sum, result) => sum + result.states, 0);
  console.log(`[model] ${total} states in all; ${violations === 0 ? '0 violations' : `${violations} VIOLATIONS`}`);
  if (out) {
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, JSON.stringify(file));
    const traces = file.configurations.reduce((sum, configuration) => sum + configuration.traces.length, 0);
    console.log(`[model] ${traces} traces for the real code to follow: ${out}`);
  }
  return violations === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[model] ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
