// The lab's timeline in the real Redis: each attendee's lab reads its own lanes, whatever the room writes.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { clickOf } from '../../test/timeline.ts';
import { getRedis } from '../redis.ts';
import { appendToTimeline, publishTimelineEvent, readTimeline } from './timeline.ts';
import type { LanePiece, TimelineEvent } from './timeline-event.ts';

/** The orders of the lanes read (what concerns everyone, such as a change of Redis server, left out). */
const orderNosOf = (events: TimelineEvent[]) =>
  events.filter((event) => event.channel !== 'redis').map((event) => event.orderNo);

describe('the lab’s timeline', () => {
  it('shows an attendee their own lanes however many others write: two callers’ 220 entries each starve nobody', async () => {
    const [victim, noisy, louder] = [randomUUID(), randomUUID(), randomUUID()];
    await publishTimelineEvent(clickOf(victim, 'VICTIM-1'));
    const seen = await readTimeline(undefined, 200, victim);
    expect(orderNosOf(seen)).toEqual(['VICTIM-1']);

    for (let i = 0; i < 220; i += 1) {
      await Promise.all([
        publishTimelineEvent(clickOf(noisy, `NOISY-${i}`)),
        publishTimelineEvent(clickOf(louder, `LOUDER-${i}`)),
      ]);
    }
    // On reload: the victim's lane is still there, and nobody else's.
    expect(orderNosOf(await readTimeline(undefined, 200, victim))).toEqual(['VICTIM-1']);
    // A poll after the cursor: nothing new is nothing, and the victim's next lane comes at once.
    const cursor = seen.at(-1)?.streamId;
    expect(orderNosOf(await readTimeline(cursor, 200, victim))).toEqual([]);
    await publishTimelineEvent(clickOf(victim, 'VICTIM-2'));
    expect(orderNosOf(await readTimeline(cursor, 200, victim))).toEqual(['VICTIM-2']);
    // The room still reads everyone's.
    expect(orderNosOf(await readTimeline(undefined, 10))).toContain('VICTIM-2');
    // An attendee's own lanes are kept for a workshop's day, no longer.
    const ttls = await Promise.all([victim, noisy].map((viewer) => getRedis().pttl(`{lab:timeline}:viewer:${viewer}`)));
    for (const ttl of ttls) expect(ttl).toBeGreaterThan(60 * 60 * 1000);
  });

  it('shows every lab what concerns everyone (a change of Redis server), once, even in the cursor’s millisecond', async () => {
    const viewer = randomUUID();
    await publishTimelineEvent(clickOf(viewer, 'MINE-1'));
    const mine = (await readTimeline(undefined, 200, viewer)).find((event) => event.orderNo === 'MINE-1');
    const failover: TimelineEvent = {
      requestId: randomUUID(),
      orderNo: '',
      channel: 'redis',
      instance: 'test',
      step: 'redis',
      decision: 'failed over',
      durationMs: 0,
      at: Date.now(),
    };
    // Written in the very millisecond of the cursor, just after the lab read it (this worker's Redis
    // database is its own, so the shared stream starts empty here).
    const [ms] = (mine?.streamId ?? '').split('-');
    await getRedis().del('{lab:timeline}:everyone');
    await getRedis().xadd('{lab:timeline}:everyone', `${ms}-*`, 'events', JSON.stringify([failover]));
    const fresh = await readTimeline(mine?.streamId, 200, viewer);
    expect(fresh.filter((event) => event.channel === 'redis')).toHaveLength(1);
    const anyone = await readTimeline(undefined, 200, randomUUID());
    expect(anyone.filter((event) => event.channel === 'redis').length).toBeGreaterThanOrEqual(1); // every lab shows it
    expect(new Set(fresh.map((event) => event.id)).size).toBe(fresh.length);
    expect(fresh.some((event) => event.orderNo === 'MINE-1')).toBe(false);
  });

  it('writes one batch of lanes to the room and to each viewer’s own stream: each viewer its lanes, no other', async () => {
    const [ada, bob, eve] = [randomUUID(), randomUUID(), randomUUID()];
    const piece = (orderNo: string, viewers: string[]): LanePiece => ({
      lane: { requestId: randomUUID(), orderNo, channel: 'api', instance: 'test', viewers },
      steps: [[1, Date.now(), 'request', 'received']],
    });
    // One batch, as the span processor gathers it: Ada's, Bob's, and one lane both see (Ada paid Bob's order).
    await appendToTimeline(getRedis(), {
      lanes: [piece('ADA-1', [ada]), piece('BOB-1', [bob]), piece('BOTH-1', [ada, bob])],
    });
    await appendToTimeline(getRedis(), { lanes: [piece('EVE-1', [eve])] }); // a batch that is all one viewer's
    // A lane that names its viewer twice (its caller and its order's owner, the same person) is still one lane of two.
    await appendToTimeline(getRedis(), { lanes: [piece('EVE-2', [eve, eve]), piece('BOB-2', [bob])] });
    expect(orderNosOf(await readTimeline(undefined, 200, ada))).toEqual(['ADA-1', 'BOTH-1']);
    expect(orderNosOf(await readTimeline(undefined, 200, bob))).toEqual(['BOB-1', 'BOTH-1', 'BOB-2']);
    expect(orderNosOf(await readTimeline(undefined, 200, eve))).toEqual(['EVE-1', 'EVE-2']);
    // The room: the three batches, every lane once (among whatever else this worker's tests wrote to it).
    const mine = ['ADA-1', 'BOB-1', 'BOTH-1', 'EVE-1', 'EVE-2', 'BOB-2'];
    const room = orderNosOf(await readTimeline(undefined, 50)).filter((orderNo) => mine.includes(orderNo));
    expect(room).toEqual(mine);
  });
});
