import { describe, expect, it } from 'vitest';
import { RaceScheduler, type StoreFailure } from './scheduler.ts';

/** Two actors that each log a line between points, under a given list of choices. */
async function interleave(choices: number[], crashAt?: { point: string }) {
  const scheduler = new RaceScheduler();
  const log: string[] = [];
  const actor = (name: string) => async (at: (point: string) => Promise<void>) => {
    try {
      log.push(`${name}1`);
      await at('middle');
      await Promise.resolve(); // an await that is not a point: the actor keeps its turn
      log.push(`${name}2`);
      return name;
    } finally {
      log.push(`${name} unwound`);
    }
  };
  const ends = [scheduler.spawn('a', actor('a'), crashAt), scheduler.spawn('b', actor('b'))];
  await scheduler.runChoices(choices);
  return { log, trace: scheduler.trace, ends: await Promise.all(ends) };
}

describe('race scheduler', () => {
  it('runs one actor at a time, in the order the choices say, and replays it exactly', async () => {
    const first = await interleave([1, 0, 0, 1]);
    expect(first.trace).toEqual(['b@start', 'a@start', 'a@middle', 'b@middle']);
    expect(first.log).toEqual(['b1', 'a1', 'a2', 'a unwound', 'b2', 'b unwound']);
    expect(first.ends).toEqual([
      { kind: 'returned', value: 'a' },
      { kind: 'returned', value: 'b' },
    ]);
    expect((await interleave([1, 0, 0, 1])).log).toEqual(first.log);
    expect((await interleave([0, 0, 1, 1])).log).toEqual(['a1', 'a2', 'a unwound', 'b1', 'b2', 'b unwound']);
  });

  it('gives the turn of an actor that has ended to the next one waiting', async () => {
    expect((await interleave([0])).trace).toEqual(['a@start', 'a@middle', 'b@start', 'b@middle']);
  });

  it('kills an actor at its crash point: it never runs another line, not even a finally', async () => {
    const { log, ends } = await interleave([0], { point: 'middle' });
    expect(log).toEqual(['a1', 'b1', 'b2', 'b unwound']);
    expect(ends[0]).toEqual({ kind: 'crashed', point: 'middle' });
  });

  it('fails the store at a point: the actor runs on from it and the point throws, which its own code handles', async () => {
    const scheduler = new RaceScheduler();
    const log: string[] = [];
    const body = async (at: (point: string) => Promise<void>) => {
      try {
        await at('middle');
        log.push('the store answered');
      } catch (error) {
        log.push(`caught ${(error as StoreFailure).point}`);
      }
      await at('after');
      return 'answered';
    };
    const end = scheduler.spawn('a', body, undefined, { point: 'middle' });
    await scheduler.runChoices([0]);
    expect(log).toEqual(['caught middle']);
    expect(scheduler.trace).toEqual(['a@start', 'a✗middle', 'a@after']);
    expect(await end).toEqual({ kind: 'returned', value: 'answered' });
  });

  it('crashes a waiting actor on demand, and runs one actor to a named point', async () => {
    const scheduler = new RaceScheduler();
    const log: string[] = [];
    const end = scheduler.spawn('a', async (at) => {
      await at('one');
      log.push('after one');
      await at('two');
      log.push('after two');
    });
    await scheduler.runUntil('a', 'two');
    expect(log).toEqual(['after one']);
    scheduler.crash('a');
    expect(await end).toEqual({ kind: 'crashed', point: 'two' });
    expect(scheduler.trace).toEqual(['a@start', 'a@one', 'a✝two']);
    await expect(scheduler.runUntil('a', 'three')).rejects.toThrow(/a ended before reaching three/);
  });

  it('reports an actor that never reaches a point (a deadlock) instead of hanging', async () => {
    const scheduler = new RaceScheduler({}, 50);
    void scheduler.spawn('stuck', () => new Promise(() => {}));
    await expect(scheduler.runChoices([0])).rejects.toThrow(/stuck did not reach a point within 50 ms/);
  });

  it('records what an actor threw', async () => {
    const scheduler = new RaceScheduler();
    const end = scheduler.spawn('throws', async () => {
      throw new Error('boom');
    });
    await scheduler.runChoices([0]);
    expect(await end).toMatchObject({ kind: 'threw', error: new Error('boom') });
  });
});
