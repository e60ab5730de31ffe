// The race explorer against the real pipeline, the real reconciler, PostgreSQL and Redis (explorer.ts).
// The regression cases are the schedules that charged twice before the recovery path was fenced.
import { describe, expect, it } from 'vitest';
import { runSchedule } from './explorer.ts';
import { REGRESSIONS } from './regressions.ts';

describe('race explorer: schedules that once charged twice', () => {
  for (const { name, schedule } of REGRESSIONS) {
    // Before the fix: each of these breaks an invariant (it.fails fails when the schedule passes).
    it.fails(name, async () => {
      const finding = await runSchedule(schedule, { realTimeLeases: true });
      expect(finding?.violations ?? []).toEqual([]);
    });
  }
});
