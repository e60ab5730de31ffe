// The race explorer against the real pipeline, the real reconciler, PostgreSQL and Redis (explorer.ts):
// the schedules that broke an invariant before their fix (regressions.ts), then random schedules, as many
// as RACE_SCHEDULES says (`npm test` runs a bounded number; `npm run races -- --schedules N` more).
import { describe, expect, it } from 'vitest';
import { explore, runScript } from './explorer.ts';
import { REGRESSIONS } from './regressions.ts';
import { INVARIANTS } from './world.ts';

const SCHEDULES = Number(process.env.RACE_SCHEDULES ?? 600);
const SEED = process.env.RACE_SEED ? Number(process.env.RACE_SEED) : Math.floor(Math.random() * 2 ** 31);
const ONLY = process.env.RACE_ONLY;

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

describe.skipIf(SCHEDULES === 0)('race explorer: random schedules', () => {
  it(`${SCHEDULES} schedules over every configuration of layers 2-5 hold every invariant`, async () => {
    const result = await explore({ count: SCHEDULES, seed: SEED });
    console.log(
      `[races] ${result.schedules} schedules in ${result.seconds.toFixed(1)} s ` +
        `(${Math.round(result.schedules / result.seconds)}/s), seed ${SEED} (RACE_SEED=${SEED} replays them)\n` +
        `[races] ${result.failures.length === 0 ? 'held' : 'BROKEN'}: ${INVARIANTS.join('; ')}`,
    );
    for (const { seed, schedule, finding } of result.failures) {
      console.log(
        `[races] seed ${seed}: ${finding.violations.join('; ')}\n${JSON.stringify({ schedule, ...finding })}`,
      );
    }
    expect(result.failures.map(({ finding }) => finding.violations)).toEqual([]);
  }, 600_000);
});
