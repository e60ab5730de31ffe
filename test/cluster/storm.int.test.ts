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
import {
  ALL_OFF,
  ALL_ON,
  type Answer,
  type App,
  createOrder,
  hostilePort,
  labFor,
  ownDatabase,
  payByApi,
  send,
  startTestApp,
} from '../hostile/harness.ts';

const APP_PORT = hostilePort(3138);
const ORDERS = 100;
const REQUESTS = 1_000;
/** Requests in flight at once: enough for same-key and other-key duplicates to meet inside one payment. */
const IN_FLIGHT = 100;
const OFF_ORDERS = 4;

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

/** One request per entry, at most IN_FLIGHT at once; every answer, in order. */
async function fire(requests: Array<() => Promise<Answer>>, inFlight: number): Promise<Answer[]> {
  const answers: Answer[] = new Array(requests.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < requests.length; i = next++) answers[i] = await (requests[i] as () => Promise<Answer>)();
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, requests.length) }, worker));
  return answers;
}

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
    const health = await send(`${running().url}/api/health`);
    expect(health.json()).toEqual({ status: 'ok', redis: 'ok', database: 'ok' });
  });

  it(`${REQUESTS} duplicate payment requests over ${ORDERS} orders, every defence on: exactly one charge per order`, async () => {
    const orderNos = await Promise.all(
      Array.from({ length: ORDERS }, () => createOrder(running(), { lab: labFor(ALL_ON) })),
    );
    // Ten requests per order: one client's retries (the same key), another client's retries (its own key),
    // and three requests of the first client that each mint a new key (other intents, the same order).
    const perOrder = (orderNo: string) => [
      ...Array.from({ length: 4 }, () => () => payByApi(running(), orderNo, `a-${orderNo}`, { clientId: 'shop-a' })),
      ...Array.from({ length: 3 }, () => () => payByApi(running(), orderNo, `b-${orderNo}`, { clientId: 'shop-b' })),
      ...Array.from(
        { length: 3 },
        (_, i) => () => payByApi(running(), orderNo, `new-${i}-${orderNo}`, { clientId: 'shop-a' }),
      ),
    ];
    const requests = orderNos.flatMap(perOrder);
    expect(requests).toHaveLength(REQUESTS);
    for (let i = requests.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [requests[i], requests[j]] = [requests[j] as () => Promise<Answer>, requests[i] as () => Promise<Answer>];
    }
    const started = performance.now();
    const answers = await fire(requests, IN_FLIGHT);
    const seconds = (performance.now() - started) / 1000;
    const statuses = new Map<number, number>();
    for (const { status } of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    console.log(
      `[cluster storm] ${REQUESTS} requests in ${seconds.toFixed(1)} s: ${[...statuses].map(([status, n]) => `${n}× ${status}`).join(', ')}`,
    );
    // The first request of an order: 201; a duplicate: the first outcome (200 or a replayed 201); one that came
    // while the first was running: 409. Never a 5xx: the cluster answered every command.
    expect([...statuses.keys()].filter((status) => ![200, 201, 409].includes(status))).toEqual([]);

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

  it(`and it can fail: every defence off, ${OFF_ORDERS} orders paid by 10 concurrent requests each are charged more than once`, async () => {
    const orderNos = await Promise.all(
      Array.from({ length: OFF_ORDERS }, () => createOrder(running(), { lab: labFor(ALL_OFF, 100) })),
    );
    const requests = orderNos.flatMap((orderNo) =>
      Array.from({ length: 10 }, (_, i) => () => payByApi(running(), orderNo, `off-${i}-${orderNo}`)),
    );
    await fire(requests, requests.length);
    const charges = await chargesPerOrder(orderNos);
    console.log(`[cluster storm] every defence off: charges per order ${[...charges.values()].join(', ')}`);
    expect([...charges].filter(([, n]) => n < 2)).toEqual([]);
  });
});
