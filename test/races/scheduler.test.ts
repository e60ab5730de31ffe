import { describe, expect, it } from 'vitest';
import { RaceScheduler } from './scheduler.ts';

/** Two actors that each log a line between points, under a given list of choices. */
async function interleave(choices: number[]) {
  const scheduler = new RaceScheduler(choices);
  const log: string[] = [];
  const actor = (name: string) => async (at: (point: string) => Promise<void>) => {
    log.push(`${name}1`);
    await at('middle');
    await Promise.resolve(); // an await that is not a point: the actor keeps its turn
    log.push(`${name}2`);
    return name;
  };
  const ends = [scheduler.spawn('a', actor('a')), scheduler.spawn('b', actor('b'))];
  await scheduler.run();
  return { log, trace: scheduler.trace, ends: await Promise.all(ends) };
}

describe('race scheduler', () => {
  it('runs one actor at a time, in the order the choices say, and replays it exactly', async () => {
    const first = await interleave([1, 0, 0, 1]);
    expect(first.trace).toEqual(['b@start', 'a@start', 'a@middle', 'b@middle']);
    expect(first.log).toEqual(['b1', 'a1', 'a2', 'b2']);
    expect(first.ends).toEqual([
      { kind: 'returned', value: 'a' },
      { kind: 'returned', value: 'b' },
    ]);
    expect((await interleave([1, 0, 0, 1])).log).toEqual(first.log);
    expect((await interleave([0, 0, 1, 1])).log).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('gives the turn of an actor that has ended to the next one waiting', async () => {
    expect((await interleave([0])).trace).toEqual(['a@start', 'a@middle', 'b@start', 'b@middle']);
  });

  it('reports an actor that never reaches a point (a deadlock) instead of hanging', async () => {
    const scheduler = new RaceScheduler([0]);
    void scheduler.spawn('stuck', () => new Promise(() => {}));
    await expect(scheduler.run(50)).rejects.toThrow(/stuck did not reach a point within 50 ms/);
  });

  it('records what an actor threw', async () => {
    const scheduler = new RaceScheduler([0]);
    const end = scheduler.spawn('crash', async () => {
      throw new Error('boom');
    });
    await scheduler.run();
    expect(await end).toMatchObject({ kind: 'threw', error: new Error('boom') });
  });
});
