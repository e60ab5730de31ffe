// The app on a Redis Cluster (decision 020): its production build, `next start`, with REDIS_URL naming the
// three-primary cluster that npm test starts (scripts/lib/redis-cluster.ts). A storm of 1,000 payment
// requests over 100 orders, every defence on, charges each order exactly once; the request keys it wrote are
// spread over the primaries (the slots are really in use). With every defence off, a few orders paid by
// concurrent duplicates are charged more than once: the storm could fail, so its pass means something.
import type { Cluster } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../lib/redis.ts';
import { isRedisClusterUrl } from '../../lib/redis-cluster-url.ts';
import { ALL_OFF, ALL_ON, type App, hostilePort, labFor, ownDatabase, send, startTestApp } from '../hostile/harness.ts';

const APP_PORT = hostilePort(3138);
const ORDERS = 100;
const REQUESTS = 1_000;
/**
 * Requests in flight at once (as the benchmark's duplicate storm): enough for same-key and other-key duplicates
 * to meet inside one payment, few enough that a request is not queued in the app for long on a busy machine.
 */
const IN_FLIGHT = 50;
const OFF_ORDERS = 4;
// A caller stops retrying this long after its first request, and waits this long for one answer: generous, for
// the suite may share a busy machine.
const CALLER_DEADLINE_MS = 120_000;
const ANSWER_TIMEOUT_MS = 60_000;

const redisUrl = process.env.REDIS_URL ?? '';
let app: App | undefined;
let databaseUrl = '';

const running = (): App => {
  if (!app) throw new Error('the app is not running');
  return app;
};

beforeAll(async () => {
  if (!isRedisClusterUrl(redisUrl)) {
    throw new Error(`REDIS_URL must name a Redis Cluster here (npm test's cluster run), got ${redisUrl}`);
  }
  databaseUrl = await ownDatabase('payonce_cluster_storm');
  app = await startTestApp({ port: APP_PORT, databaseUrl, redisUrl, instanceName: 'cluster-storm' });
});

afterAll(async () => {
  await app?.stop();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What a well-behaved client does: send, and on 409 (the first request is still running), 503 (a service is
 * overloaded or down: on a busy machine a Redis command can miss its 2 s deadline) or a dropped request, send
 * again with the same key after a pause, until a final answer or its deadline. Every attempt's status is kept.
 */
async function payAsAClient(orderNo: string, key: string, clientId: string, statuses: number[]): Promise<number> {
  const deadline = Date.now() + CALLER_DEADLINE_MS;
  for (;;) {
    const status = await send(`${running().url}/api/payments`, {
      method: 'POST',
      headers: { 'idempotency-key': key, 'x-client-id': clientId },
      body: JSON.stringify({ orderNo, amountCents: 4_200 }),
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    }).then(
      (answer) => answer.status,
      () => 0, // dropped: no answer in time
    );
    statuses.push(status);
    if (![0, 409, 503].includes(status) || Date.now() > deadline) return status;
    await pause(300 + Math.random() * 400);
  }
}

/** POST /api/orders, again after a 503 (a busy machine); the order number. */
async function newOrder(lab: Record<string, unknown>): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send(`${running().url}/api/orders`, { method: 'POST', body: JSON.stringify({ lab }) });
    if (answer.status === 201) return (answer.json() as { orderNo: string }).orderNo;
    if (answer.status !== 503 || attempt === 5) throw new Error(`order creation: ${answer.status} ${answer.text}`);
    await pause(500);
  }
}

/** Each task once, at most `inFlight` at once. */
async function fire<T>(tasks: Array<() => Promise<T>>, inFlight: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < tasks.length; i = next++) results[i] = await (tasks[i] as () => Promise<T>)();
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, tasks.length) }, worker));
  return results;
}

function shuffled<T>(list: T[]): T[] {
  const copy = [...list];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

const tally = (statuses: number[]) => {
  const counts = new Map<number, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n}× ${status === 0 ? 'dropped' : status}`).join(', ');
};

/** Charges per order, from the card network's statement. */
async function chargesPerOrder(orderNos: string[]): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ merchant_ref: string; n: number }>(
      'SELECT merchant_ref, count(*)::int AS n FROM bank_charges WHERE merchant_ref = ANY($1) GROUP BY merchant_ref',
      [orderNos],
    );
    return new Map(orderNos.map((orderNo) => [orderNo, rows.find((row) => row.merchant_ref === orderNo)?.n ?? 0]));
  } finally {
    await client.end();
  }
}

describe('the app on a Redis Cluster', () => {
  it('answers health with Redis ok', async () => {
    // Each probe gives a service 1.5 s (lib/health.ts): on a busy machine the app's first connections to the
    // cluster and the database may take longer, and health says so. It must say ok once they are made.
    let health = await send(`${running().url}/api/health`);
    for (let tries = 1; health.status !== 200 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      health = await send(`${running().url}/api/health`);
    }
    expect(health.json()).toEqual({ status: 'ok', redis: 'ok', database: 'ok' });
  });

  it(`${REQUESTS} duplicate payment requests over ${ORDERS} orders, every defence on: exactly one charge per order`, {
    timeout: 300_000,
  }, async () => {
    const orderNos = await fire(
      Array.from({ length: ORDERS }, () => () => newOrder(labFor(ALL_ON))),
      20,
    );
    // Ten requests per order: one client's retries (the same key), another client's retries (its own key),
    // and three requests of the first client that each mint a new key (other intents, the same order).
    const statuses: number[] = [];
    const perOrder = (orderNo: string) => [
      ...Array.from({ length: 4 }, () => () => payAsAClient(orderNo, `a-${orderNo}`, 'shop-a', statuses)),
      ...Array.from({ length: 3 }, () => () => payAsAClient(orderNo, `b-${orderNo}`, 'shop-b', statuses)),
      ...Array.from({ length: 3 }, (_, i) => () => payAsAClient(orderNo, `new-${i}-${orderNo}`, 'shop-a', statuses)),
    ];
    // An order's ten requests go out together, in a random order, so they meet inside one another's payment:
    // concurrent claims of one key (layer 2) and of one order under several keys (layers 3-5), on the cluster.
    const requests = orderNos.flatMap((orderNo) => shuffled(perOrder(orderNo)));
    expect(requests).toHaveLength(REQUESTS);
    const started = performance.now();
    const finals = await fire(requests, IN_FLIGHT);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `[cluster storm] ${REQUESTS} requests (${statuses.length} with the retries of 409s and 503s) in ${seconds.toFixed(1)} s: ${tally(statuses)}`,
    );
    // The first request of an order: 201; a duplicate: the first outcome (200, or a replayed 201); one that came
    // while the first was running: 409, then the outcome. Never a 500: the cluster answered every command.
    expect(statuses.filter((status) => status >= 500 && status !== 503)).toEqual([]);
    expect(finals.filter((status) => ![200, 201].includes(status))).toEqual([]);

    const charges = await chargesPerOrder(orderNos);
    expect([...charges].filter(([, n]) => n !== 1)).toEqual([]);

    // The lab's timeline, a stream on the cluster, shows the storm's lanes.
    const timeline = (await send(`${running().url}/api/lab/timeline?scope=room`)).json() as {
      events: Array<{ orderNo: string }>;
    };
    expect(timeline.events.some((event) => orderNos.includes(event.orderNo))).toBe(true);

    // The request keys are spread over the primaries: the app really used the slots of all three.
    const cluster = connectRedis(redisUrl) as Cluster;
    try {
      await cluster.ping(); // answered once the client is ready and knows the nodes
      const perPrimary = await Promise.all(
        cluster.nodes('master').map(async (node) => (await node.keys('idem:{c.shop-*')).length),
      );
      expect(perPrimary).toHaveLength(3);
      for (const keys of perPrimary) expect(keys).toBeGreaterThan(0);
    } finally {
      cluster.disconnect();
    }
  });

  it(`and it can fail: every defence off, ${OFF_ORDERS} orders paid by 10 concurrent requests each are charged more than once`, {
    timeout: 120_000,
  }, async () => {
    const orderNos = await fire(
      Array.from({ length: OFF_ORDERS }, () => () => newOrder(labFor(ALL_OFF, 100))),
      OFF_ORDERS,
    );
    const statuses: number[] = [];
    const requests = orderNos.flatMap((orderNo) =>
      Array.from({ length: 10 }, (_, i) => () => payAsAClient(orderNo, `off-${i}-${orderNo}`, 'shop-off', statuses)),
    );
    await fire(requests, requests.length);
    const charges = await chargesPerOrder(orderNos);
    console.log(
      `[cluster storm] every defence off: charges per order ${[...charges.values()].join(', ')} (${tally(statuses)})`,
    );
    expect([...charges].filter(([, n]) => n < 2)).toEqual([]);
  });
});
