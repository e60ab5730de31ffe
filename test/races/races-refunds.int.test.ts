// The race explorer for refunds (refund-world.ts): random schedules over every configuration of layers 2-5, as many
// as RACE_REFUND_SCHEDULES says, from RACE_SEED (or a random seed, printed, that replays them).
import { describe, expect, it } from 'vitest';
import { exploreRefunds, REFUND_INVARIANTS, REFUND_SCRIPTS, runRefundScript } from './refund-world.ts';

describe('race explorer: scripted schedules of refunds', () => {
  it.each(REFUND_SCRIPTS.map((script) => [script.name, script] as const))('%s', async (_, script) => {
    const violations = await runRefundScript(script);
    if (violations) console.log(`[races] seed script: ${script.name}\n  ${violations.join('\n  ')}`);
    expect(violations?.filter((v) => !v.includes('@')) ?? []).toEqual([]);
  });
});

const SCHEDULES = Number(process.env.RACE_REFUND_SCHEDULES ?? 30);
const SEED = process.env.RACE_SEED ? Number(process.env.RACE_SEED) : Math.floor(Math.random() * 2 ** 31);

describe.skipIf(SCHEDULES === 0)('race explorer: refunds', () => {
  it(`${SCHEDULES} schedules of refunds over every configuration of layers 2-5 hold every invariant`, async () => {
    const result = await exploreRefunds({ count: SCHEDULES, seed: SEED });
    console.log(
      `[races] ${result.schedules} refund schedules in ${result.seconds.toFixed(1)} s, seed ${SEED} ` +
        `(RACE_SEED=${SEED} replays them)\n[races] ${result.failures.length === 0 ? 'held' : 'BROKEN'}: ${REFUND_INVARIANTS.join('; ')}`,
    );
    for (const { seed, schedule, violations } of result.failures) {
      console.log(`[races] seed ${seed}: ${JSON.stringify(schedule)}\n  ${violations.join('\n  ')}`);
    }
    expect(result.failures.map(({ violations }) => violations.filter((v) => !v.includes('@')))).toEqual([]);
  }, 1_800_000);
});
