// The race explorer's third part (races.int.test.ts has the first two): random schedules beyond the model's
// bound, over every configuration of layers 2-5, as many as RACE_SCHEDULES says, from RACE_SEED (or a random
// seed, printed, that replays them). A file of its own, so that vitest runs it beside the model's traces.
import { afterAll, describe, expect, it } from 'vitest';
import { explore as exploreRandom } from './explorer.ts';
import { printCoverage } from './print-coverage.ts';
import { INVARIANTS } from './world.ts';

const SCHEDULES = Number(process.env.RACE_SCHEDULES ?? 60);
const SEED = process.env.RACE_SEED ? Number(process.env.RACE_SEED) : Math.floor(Math.random() * 2 ** 31);

describe.skipIf(SCHEDULES === 0)('race explorer: random schedules', () => {
  it(`${SCHEDULES} schedules over every configuration of layers 2-5 hold every invariant`, async () => {
    const result = await exploreRandom({ count: SCHEDULES, seed: SEED });
    console.log(
      `[races] ${result.schedules} random schedules in ${result.seconds.toFixed(1)} s ` +
        `(${Math.round(result.schedules / result.seconds)}/s), seed ${SEED} (RACE_SEED=${SEED} replays them)\n` +
        `[races] ${result.failures.length === 0 ? 'held' : 'BROKEN'}: ${INVARIANTS.join('; ')}`,
    );
    for (const { seed, schedule, finding } of result.failures) {
      console.log(
        `[races] seed ${seed}: ${finding.violations.join('; ')}\n${JSON.stringify({ schedule, ...finding })}`,
      );
    }
    expect(result.failures.map(({ finding }) => finding.violations)).toEqual([]);
  }, 1_800_000);
});

afterAll(printCoverage);
