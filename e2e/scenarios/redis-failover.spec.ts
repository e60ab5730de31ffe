// Source 4 in Redis itself: a Sentinel failover that loses a claim. A real primary, replica and three
// Sentinels (scripts/lib/redis-sentinel.ts), and an app instance of this file's own that reaches Redis only
// through them (REDIS_SENTINELS), sharing the tests' PostgreSQL.
//
// Redis replicates asynchronously: the primary acknowledges a write, then sends it to the replica. A primary
// that dies in between takes the write with it, and Sentinel promotes a replica that never saw it. In
// production that window is the replication lag (usually below a millisecond, longer under load or across
// a slow link); here it is held open on purpose, so the loss happens every run, not by luck:
//   1. the replica is paused (SIGSTOP: its process keeps its sockets, reads nothing, answers nothing);
//   2. the primary drops its link to the replica (CLIENT KILL TYPE replica): nothing written from now on is
//      in flight to the replica, nor can it be sent later (the paused replica cannot reconnect and resync);
//   3. eight payments, one per configuration, claim their keys on the primary and wait at the bank (3 s),
//      holding their claims: the charge is on the card once the bank holds the payment;
//   4. the primary dies (SIGKILL), and the replica resumes (SIGCONT): it finds its link gone and the primary
//      unreachable. Paused only a moment, it is not excluded from promotion (Sentinel passes over a replica
//      that is down, silent for 5 s, or whose link has been down for ten times down-after-milliseconds, and
//      one with replica-priority 0);
//   5. the Sentinels agree the primary is down (1 s without an answer, quorum 2), elect a leader and promote
//      the replica; the app's client asks them again, reaches the new primary, and the lab's timeline says
//      so (lib/lab/redis-failover.ts);
//   6. the client retries each payment with its Idempotency-Key. The key's claim is gone: layer 2 sees a new
//      request. Layers 3 and 4 (the order's claim, in PostgreSQL) and 5 (the bank's key) never were in Redis.
// Without either of steps 1 and 2 the claims survive (tried): unpaused, the replica reconnects and resyncs from
// the primary's backlog before the primary is killed; with its link left up, the claims wait in the paused
// replica's socket buffer, and it reads them when it resumes (docs/decisions/019-redis-failover.md).
import path from 'node:path';
import type { RunningApp } from '../../scripts/lib/next-app';
import { ROOT } from '../../scripts/lib/paths';
import { type SentinelTopology, startSentinelTopology } from '../../scripts/lib/redis-sentinel';
import { ensureProgram, REDIS_SERVER } from '../../scripts/lib/system-programs';
import { chargeCount, expect, test } from '../fixtures';
import { categorizeResponse, type RunCell, scenarioInOneRun } from './cell';
import { attachOutputsOnFailure, payingClient, startOwnApp } from './failover';
import { CONFIGURATIONS } from './matrix';

const OFFSET = Number(process.env.TEST_PORT_OFFSET ?? 0);
const APP_PORT = 3145 + OFFSET;
const APP = `http://127.0.0.1:${APP_PORT}`;
/** The primary on this port, the replica on the next, the Sentinels on +5 to +7. */
const REDIS_BASE_PORT = 26470 + OFFSET;
const CLIENT = 'failover-shop';
const { pay, retryUntilFinal } = payingClient({
  app: APP,
  client: CLIENT,
  keyPrefix: 'failover-',
  timeoutMs: 30_000,
  attempts: 20,
});

let topology: SentinelTopology | undefined;
let app: RunningApp | undefined;

// A failover uses the topology up (its primary is dead after it): every run of the test starts its own, and its
// own app, on the same ports, so runs of it go one at a time (`--repeat-each 5 --workers 1`).
test.beforeEach(async () => {
  // The test's own guard (scenarioInOneRun's 300 s) is set in its body, after this hook: beside a second test run,
  // starting five Redis servers and an app went past the default minute. The hook runs under the same guard.
  test.setTimeout(300_000);
  topology = await startSentinelTopology({
    binary: ensureProgram(REDIS_SERVER, console.log),
    basePort: REDIS_BASE_PORT,
    dataDir: path.join(ROOT, '.data/test/sentinel'),
  });
  app = await startOwnApp(APP_PORT, {
    REDIS_URL: '', // unset: one way to reach Redis
    REDIS_SENTINELS: topology.sentinelList,
    REDIS_SENTINEL_NAME: topology.name,
    INSTANCE_NAME: 'sentinel-app',
  });
});

// biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature
test.afterEach(async ({}, testInfo) => {
  await attachOutputsOnFailure(testInfo, { 'the app': app?.output, 'the Redis servers': topology?.output });
  await app?.stop();
  await topology?.stop();
  app = undefined;
  topology = undefined;
});

scenarioInOneRun('redis-failover', 'one failover, eight orders: one per configuration', async ({ request }, labOf) => {
  const redis = topology;
  if (!redis) throw new Error('no Sentinel topology');
  const primary = redis.connect(redis.primary);

  // An order per configuration, on this app, each with its defences; the client pays each with its own key. The app
  // is fresh: its eight connections to the database open now, and beside a second test run one took longer than the
  // pool's 3 s (503 "try again shortly", nothing written). The client does as the answer says.
  const orders = await Promise.all(
    CONFIGURATIONS.map(async ({ id, layers }) => {
      const create = () =>
        request.post(`${APP}/api/orders`, {
          headers: { 'x-client-id': CLIENT },
          data: { amountCents: 4200, lab: labOf(layers) },
        });
      let response = await create();
      for (let attempt = 2; attempt <= 5 && response.status() === 503; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, Number(response.headers()['retry-after'] ?? '1') * 1000));
        response = await create();
      }
      expect(response.status(), await response.text()).toBe(201);
      return { configuration: id, orderNo: ((await response.json()) as { orderNo: string }).orderNo };
    }),
  );

  // 1-2. Nothing written from here on reaches the replica.
  redis.replica.signal('SIGSTOP');
  expect(await primary.call('CLIENT', 'KILL', 'TYPE', 'replica')).toBe(1);

  // 3. The payments: each claims (layer 2 on the primary; 3 and 4 in PostgreSQL) and waits at the bank.
  const firsts = orders.map(({ orderNo }) => pay(request, orderNo));
  await expect
    .poll(async () => (await Promise.all(orders.map(({ orderNo }) => chargeCount(orderNo)))).join(), {
      timeout: 15_000,
      intervals: [50],
    })
    .toBe(orders.map(() => 1).join());
  // Layer 2's claims (all on, and layer 2 alone), acknowledged by the primary alone.
  expect(await primary.keys(`idem:{c.${CLIENT}:*`)).toHaveLength(2);

  // 4-5. The primary dies; the replica is promoted; the app follows it.
  redis.primary.signal('SIGKILL');
  await redis.primary.exited;
  redis.replica.signal('SIGCONT');
  await expect
    .poll(async () => (await redis.primaryAddress())?.port, { timeout: 30_000, intervals: [100] })
    .toBe(redis.replica.port);
  // The app's connections find the new primary through the Sentinels on their own schedule (a reconnect's
  // backoff, a health probe of 1.5 s): on a busy machine that is tens of seconds. A guard against a hang.
  // The health's body, not only its status, so that a failure says which service stayed down.
  await expect
    .poll(
      async () => {
        const response = await fetch(`${APP}/api/health`);
        return `${response.status} ${await response.text()}`;
      },
      { timeout: 120_000, intervals: [200] },
    )
    .toMatch(/^200 /);
  // The promoted replica never saw a claim.
  expect(await redis.connect(redis.replica).keys(`idem:{c.${CLIENT}:*`)).toEqual([]);
  // The lab says what happened, in every attendee's timeline (the events before it went with the old primary).
  await expect
    .poll(
      async () => {
        const { events } = (await (await fetch(`${APP}/api/lab/timeline?scope=room`)).json()) as {
          events: Array<{ channel: string; decision: string; detail?: string }>;
        };
        return events.find((event) => event.channel === 'redis')?.detail ?? '';
      },
      { timeout: 10_000, intervals: [100] },
    )
    .toContain(`the primary is now 127.0.0.1:${redis.replica.port} (was 127.0.0.1:${redis.primary.port})`);

  // 6. The client retries with the same key, as Retry-After says while the first is still at the bank.
  const retries = await Promise.all(orders.map(({ orderNo }) => retryUntilFinal(request, orderNo)));

  // What the first requests were answered, whose Redis died under them: the charge each made (201), however
  // the failover went (their outcome could not be stored in Redis, and the database has it). No 500.
  for (const [index, first] of (await Promise.all(firsts)).entries()) {
    const { configuration } = orders[index] ?? {};
    expect(first.status, `${configuration}'s first request: ${first.text.slice(0, 500)}`).toBe(201);
    expect(first.text).not.toMatch(/\n\s+at\s/);
  }
  return orders.map(({ configuration, orderNo }, index): RunCell => {
    const answer = retries[index];
    return { configuration, orderNo, sees: answer ? categorizeResponse(answer.status, answer.headers) : 'error' };
  });
});
