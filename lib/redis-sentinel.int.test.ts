// The app's client through Sentinel (connectRedis with REDIS_SENTINELS), against a real primary, replica and three
// Sentinels: it must reach the new primary after a failover, whatever moment the Sentinels' announcement of it
// (+switch-master) reaches the client.
//
// The moment forced here: the client's connection to the primary has died and it is asking a Sentinel where the
// primary is now, when the announcement arrives. With `failoverDetector` the client listens for it on every Sentinel
// and drops its connection when it comes. Until ioredis 6.1 the listener of the dead connection was still there, and
// dropping a connection that was still being made ended the client for good ("Connection is closed.", then nothing):
// an app whose every payment answered 503 until it was restarted. Playwright's Redis failover scenario met it beside a
// second test run, where the question to the Sentinel was slow enough for the announcement to come first.
// The question is held open here by pausing the Sentinel the client asks first (SIGSTOP: it accepts the connection and
// answers nothing); the two others fail the primary over and announce it meanwhile.
//
// And a Sentinel that never answers must not hold the client: ioredis gives a question to a Sentinel no deadline of
// its own, and the client waited on the paused one for ever, the two others knowing the new primary. It now gives up
// on it after a command's deadline (5 s) and asks the next.
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { ROOT } from '../scripts/lib/paths.ts';
import { type SentinelTopology, startSentinelTopology } from '../scripts/lib/redis-sentinel.ts';
import { ensureProgram, REDIS_SERVER } from '../scripts/lib/system-programs.ts';
import { until } from '../scripts/lib/until.ts';
import { connectRedis } from './redis.ts';

/** The primary on this port, the replica on the next, the Sentinels on +5 to +7 (TEST_PORT_OFFSET shifts them). */
const BASE_PORT = 26450 + Number(process.env.TEST_PORT_OFFSET ?? 0);

let topology: SentinelTopology | undefined;
const clients: Redis[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  await topology?.stop();
  topology = undefined;
});

/** The topology and the app's own client, as REDIS_SENTINELS makes it, connected to the primary. */
async function appClientOnATopology() {
  topology = await startSentinelTopology({
    binary: ensureProgram(REDIS_SERVER, console.log),
    basePort: BASE_PORT,
    dataDir: path.join(ROOT, '.data/test/sentinel-client'),
  });
  const client = connectRedis({
    sentinels: topology.sentinels.map(({ port }) => ({ host: '127.0.0.1', port })),
    name: topology.name,
  });
  if (!(client instanceof Redis)) throw new Error('a Sentinel client is one server’s');
  clients.push(client);
  const errors: string[] = [];
  client.on('error', (error: Error) => errors.push(error.message));
  const ended = new Promise<'ended'>((resolve) => client.once('end', () => resolve('ended')));
  await client.set('before', '1');
  expect(client.stream?.remotePort).toBe(topology.primary.port);
  /** Whether the client writes on the new primary (within 45 s), or ends first. */
  const reachesReplica = async () => {
    const outcome = await Promise.race([
      until(
        'the client to write on the new primary',
        async () => ((await client.set('after', '1').catch(() => undefined)) === 'OK' ? 'reached' : undefined),
        45_000,
      ),
      ended,
    ]);
    expect(outcome, `the client's errors: ${errors.join(' | ')}`).toBe('reached');
    expect(client.stream?.remotePort).toBe(topology?.replica.port);
  };
  return { servers: topology, client, reachesReplica };
}

it('reaches the new primary when the failover is announced while it asks a Sentinel where the primary is', async () => {
  const { servers, client, reachesReplica } = await appClientOnATopology();
  // The Sentinel the client asks first is the first of the list, the one that answered it.
  const [asked, ...others] = servers.sentinels;
  if (!asked) throw new Error('no Sentinel');

  // Our own ear on the two Sentinels that stay awake: the failover is announced once both have said it.
  const heard = Promise.all(
    others.map(async (sentinel) => {
      const ear = new Redis({ host: '127.0.0.1', port: sentinel.port, lazyConnect: true });
      ear.on('error', () => {});
      clients.push(ear);
      await ear.subscribe('+switch-master');
      return new Promise<void>((resolve) => ear.once('message', () => resolve()));
    }),
  );

  // 1. The Sentinel asked first stops answering; 2. the primary dies: the client reconnects, and its question to that
  // Sentinel stays open (for a command's deadline, 5 s).
  asked.signal('SIGSTOP');
  servers.primary.signal('SIGKILL');
  await servers.primary.exited;
  await until('the client to be asking the paused Sentinel', async () =>
    client.status === 'connecting' ? true : undefined,
  );

  // 3. The two others agree the primary is down, promote the replica and announce it, while the question is open.
  await heard;
  expect(client.status).toBe('connecting');
  // The client's own subscriptions heard it from the same two Sentinels at the same moment: let them be read.
  await new Promise((resolve) => setTimeout(resolve, 250));

  // 4. The paused Sentinel answers; the client must go on until it reaches the new primary.
  asked.signal('SIGCONT');
  await reachesReplica();
}, 90_000);

it('asks the next Sentinel when the one it asks takes the connection and never answers', async () => {
  const { servers, reachesReplica } = await appClientOnATopology();
  const [asked] = servers.sentinels;
  if (!asked) throw new Error('no Sentinel');
  // Paused for the whole test: it accepts the client's connection (the kernel does) and answers nothing.
  asked.signal('SIGSTOP');
  servers.primary.signal('SIGKILL');
  await servers.primary.exited;
  await reachesReplica();
}, 90_000);
