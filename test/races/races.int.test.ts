// The race explorer against the real pipeline, the real reconciler and sweep, PostgreSQL and Redis:
//   1. the schedules that broke an invariant before their fix (regressions.ts);
//   2. the real code held to the model's traces (conformance.ts): every trace of RACE_TRACES, the file the
//      exhaustive model check wrote (`npm run races`), or else a sample of a quick exploration (`npm test`);
//   3. random schedules beyond the model's bound, as many as RACE_SCHEDULES says: races-random.int.test.ts, a
//      file of its own so that vitest runs it beside this one (the longest file of the suite, on the other core).
// RACE_BAIL=1 (the mutants' runs) stops at the first finding. The coverage of the real runs is printed at the end
// (./print-coverage.ts), by each file for its own runs.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { conform } from './conformance.ts';
import { type Finding, runScript } from './explorer.ts';
import { castInWords, castsOf, safeConfigurations } from './model/bound.ts';
import { type Cast, explore as exploreModel, type Move } from './model/checker.ts';
import type { TraceFile } from './model/run.ts';
import { printCoverage } from './print-coverage.ts';
import { REGRESSIONS } from './regressions.ts';

const ONLY = process.env.RACE_ONLY;
const TRACES = process.env.RACE_TRACES;
const BAIL = process.env.RACE_BAIL === '1';
/** Without the model's file: per configuration, this many traces of its first cast, explored here. */
const SAMPLE = Number(process.env.RACE_SAMPLE ?? 6);
const LANES = 6;

describe('race explorer: schedules that once broke an invariant', () => {
  for (const { name, script } of REGRESSIONS) {
    if (ONLY && !name.includes(ONLY)) continue;
    it(name, async () => {
      const finding = await runScript(script);
      if (finding) console.log(`[races] ${name}\n${JSON.stringify(finding, null, 1)}`);
      expect(finding?.violations ?? []).toEqual([]);
    });
  }
});

type Trace = { configuration: string; cast: Cast; why: string; moves: Move[] };

/** The traces to follow: the model's file, or a sample of a quick exploration of each configuration's first cast. */
function tracesToFollow(): { traces: Trace[]; source: string } {
  if (TRACES) {
    const file = JSON.parse(readFileSync(TRACES, 'utf8')) as TraceFile;
    const traces = file.configurations.flatMap((configuration) =>
      configuration.traces.map((trace) => ({
        configuration: configuration.name,
        cast: file.casts[trace.cast] as Cast,
        why: trace.why,
        moves: trace.moves,
      })),
    );
    return { traces, source: TRACES };
  }
  const traces: Trace[] = [];
  for (const configuration of safeConfigurations()) {
    const [cast] = castsOf(configuration.layers);
    if (!cast) continue;
    const witnesses = [...exploreModel(cast).witnesses.entries()];
    // Spread over what it reached: SAMPLE witnesses, evenly apart.
    for (let n = 0; n < Math.min(SAMPLE, witnesses.length); n++) {
      const [why, moves] = witnesses[Math.floor((n * witnesses.length) / SAMPLE)] as [string, Move[]];
      traces.push({ configuration: configuration.name, cast, why, moves });
    }
  }
  return { traces, source: `a sample of ${SAMPLE} traces per configuration, explored here` };
}

describe('race explorer: the real code follows the model', () => {
  it('every trace: the same point after every step, the same world and answers once settled', async () => {
    const { traces, source } = tracesToFollow();
    const started = performance.now();
    const failures: Array<{ trace: Trace; finding: Finding }> = [];
    let next = 0;
    let followed = 0;
    await Promise.all(
      Array.from({ length: LANES }, async () => {
        for (let index = next++, trace = traces[index]; trace; index = next++, trace = traces[index]) {
          if (BAIL && failures.length > 0) return;
          // Every other trace with the payments checked at their claim (the lab off's path), the rest reading the order.
          const checkAtClaim = index % 2 === 1;
          const finding = await conform(trace.cast, trace.moves, checkAtClaim);
          followed++;
          if (finding)
            failures.push({
              trace: { ...trace, why: `${trace.why}${checkAtClaim ? ', checked at the claim' : ''}` },
              finding,
            });
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`[races] the real code followed ${followed} model traces (${source}) in ${seconds.toFixed(1)} s`);
    for (const { trace, finding } of failures.slice(0, 5)) {
      console.log(
        `[races] DIVERGED ${trace.configuration}: ${castInWords(trace.cast)} (${trace.why})\n  ${finding.violations.join('\n  ')}\n  moves: ${JSON.stringify(trace.moves)}\n  real: ${finding.trace.join(' ')}`,
      );
    }
    expect(failures.length).toBe(0);
  }, 1_800_000);
});

afterAll(printCoverage);
