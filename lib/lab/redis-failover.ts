import 'server-only';
// Tells the lab when the Redis this process talks to is no longer the server it was: a Sentinel failover (a
// replica promoted, at another address) or a restart (a new process at the same address). Either way,
// writes the old server acknowledged and had not handed on (to the replica, or to disk) are gone, and a
// request key's claim may be among them: a retry then finds no claim and layer 2 lets it through
// (docs/decisions/019-redis-failover.md). Redis gives each server process a new `run_id`; each time the
// client is ready (after every reconnection) it is compared with the last one seen. One lane per new server,
// however many processes notice it.
import type { Redis } from 'ioredis';
import { instanceName } from '../instance.ts';
import { reason, said } from './reasons.ts';
import { publishTimelineEvent } from './timeline.ts';
import type { TimelineEvent } from './timeline-event.ts';

type Server = { runId: string; address: string };

/** `run_id` from the reply to INFO server. */
export function runIdOf(info: string): string | undefined {
  return /^run_id:([0-9a-f]+)\r?$/m.exec(info)?.[1];
}

/** The timeline's event for a change of server, or undefined when it is the same server. */
export function serverChangeEvent(
  before: Server,
  now: Server,
  instance: string,
  at: number,
): TimelineEvent | undefined {
  if (before.runId === now.runId) return undefined;
  const failedOver = before.address !== now.address;
  return {
    requestId: `redis-${now.runId.slice(0, 12)}`,
    orderNo: '',
    channel: 'redis',
    instance,
    step: 'redis',
    decision: failedOver ? 'failed over' : 'restarted',
    ...said(
      failedOver
        ? reason('redisFailedOver', { now: now.address, before: before.address })
        : reason('redisRestarted', { now: now.address }),
    ),
    durationMs: 0,
    at,
  };
}

/** Watches the client's server: on a new one, a line in the log and an event on the lab's timeline. */
export function watchPrimary(client: Redis): void {
  let known: Server | undefined;
  client.on('ready', () => {
    const address = `${client.stream?.remoteAddress ?? '?'}:${client.stream?.remotePort ?? '?'}`;
    client.info('server').then(
      (info) => {
        const runId = runIdOf(info);
        if (!runId) return;
        const before = known;
        known = { runId, address };
        const event = before && serverChangeEvent(before, known, instanceName(), Date.now());
        if (!event) return;
        console.error(`[redis] ${event.decision}: ${event.detail}`);
        // Every process that uses this Redis notices (the instances, the worker): the first one tells the lab.
        void client
          .set(`lab:redis-server:${runId}`, instanceName(), 'PX', 86_400_000, 'NX')
          .then((first) => (first === 'OK' ? publishTimelineEvent(event) : undefined))
          .catch(() => {}); // Redis gone again: the next server will be told
      },
      () => {}, // the next reconnection looks again
    );
  });
}
