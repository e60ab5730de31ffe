// Hostile test 10, misuse: a deployment with the lab turned off (LAB_ENABLED=false) must not let anyone reach
// the lab or switch a defence off, through its routes, through an order's own settings, or through a lab
// setting left behind in Redis. Each check runs against a second app with the lab on too, which must do
// exactly what the first one refuses: without the switch, the same requests switch the defences off.
//
// Another caller's Idempotency-Key, another session's or another order's checkout token, and a guessed token
// are covered already: lib/payments/pay.int.test.ts ("misuse") and e2e/api-payments.spec.ts ("keys are
// scoped per caller", "a Checkout-Token from GET /api/tokens is checked by layer 1 and works once").
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_OFF,
  type App,
  chargesOf,
  createOrder,
  expectProblem,
  hostilePort,
  labFor,
  ownDatabase,
  payByApi,
  rowCounts,
  send,
  startTestApp,
} from './harness.ts';

const LAB_KEY = 'lab:config';
// What a workshop leaves behind in Redis: every defence off, a slow bank.
const EVERYTHING_OFF = JSON.stringify(labFor(ALL_OFF, 200));

let databaseUrl = '';
let redis: Redis | undefined;
let savedLab: string | null = null;
const apps: { off?: App; on?: App } = {};

beforeAll(async () => {
  databaseUrl = await ownDatabase('payonce_hostile_misuse');
  redis = new Redis(process.env.REDIS_URL ?? '');
  savedLab = await redis.get(LAB_KEY);
  await redis.set(LAB_KEY, EVERYTHING_OFF);
  const start = (port: number, labEnabled: boolean) =>
    startTestApp({
      port,
      databaseUrl,
      redisUrl: process.env.REDIS_URL ?? '',
      instanceName: `hostile-lab-${labEnabled ? 'on' : 'off'}`,
      labEnabled,
    });
  [apps.off, apps.on] = await Promise.all([start(hostilePort(3134), false), start(hostilePort(3135), true)]);
});

afterAll(async () => {
  await Promise.all([apps.off?.stop(), apps.on?.stop()]);
  // The global lab settings live in a Redis database other test files of this worker use too.
  if (savedLab === null) await redis?.del(LAB_KEY);
  else await redis?.set(LAB_KEY, savedLab);
  await redis?.quit();
});

const app = (lab: 'off' | 'on'): App => {
  const found = apps[lab];
  if (!found) throw new Error(`the app with the lab ${lab} is not running`);
  return found;
};

const LAB_REQUESTS: Array<{ method: string; path: string; body?: string; on?: number[] }> = [
  { method: 'GET', path: '/api/lab/config' },
  { method: 'GET', path: '/api/lab/config?orderNo=ord_0000000000000000' },
  { method: 'PUT', path: '/api/lab/config', body: JSON.stringify({ layers: { stateMachine: false } }) },
  { method: 'POST', path: '/api/lab/reset' },
  { method: 'GET', path: '/api/lab/timeline' },
  { method: 'GET', path: '/api/lab/timeline?after=0-0' },
  { method: 'DELETE', path: '/api/lab/timeline' },
  // Reached with the lab on: a swallowed click is reported by a checkout page, with its session (400 without).
  {
    method: 'POST',
    path: '/api/lab/timeline',
    body: JSON.stringify({ orderNo: 'ord_0000000000000000', event: 'click-swallowed' }),
    on: [400],
  },
  { method: 'GET', path: '/lab' },
];

describe('LAB_ENABLED=false', () => {
  it('the lab routes and the /lab page answer 404, and change nothing', async () => {
    for (const { method, path, body } of LAB_REQUESTS) {
      const answer = await send(`${app('off').url}${path}`, { method, body });
      expect(answer.status, `${method} ${path}`).toBe(404);
      if (path.startsWith('/api/')) expectProblem(answer, 404);
    }
    expect(await redis?.get(LAB_KEY)).toBe(EVERYTHING_OFF);
  });

  it('with the lab on, the same requests reach the lab', async () => {
    for (const { method, path, body, on } of LAB_REQUESTS) {
      const answer = await send(`${app('on').url}${path}`, { method, body });
      expect(answer.status, `${method} ${path}: ${answer.text.slice(0, 200)}`).toBeOneOf(
        on ?? (path.includes('orderNo=') ? [404] : [200, 204]),
      );
    }
    await redis?.set(LAB_KEY, EVERYTHING_OFF); // the PUT and the reset above changed it
  });

  it('POST /api/orders with a `lab` field answers 400 naming `lab`, and creates no order', async () => {
    const before = await rowCounts(databaseUrl);
    for (const lab of [labFor(ALL_OFF), {}, { faults: { crashAfterCharge: true } }]) {
      const answer = await send(`${app('off').url}/api/orders`, { method: 'POST', body: JSON.stringify({ lab }) });
      const problem = expectProblem(answer, 400);
      expect(problem.errors).toEqual([{ field: 'lab', message: expect.any(String) }]);
    }
    expect(await rowCounts(databaseUrl)).toEqual(before);
    // With the lab on, the same body makes an order with its own settings.
    const created = await send(`${app('on').url}/api/orders`, {
      method: 'POST',
      body: JSON.stringify({ lab: labFor(ALL_OFF) }),
    });
    expect(created.status).toBe(201);
  });

  for (const { lab, charges } of [
    { lab: 'off', charges: 1 },
    { lab: 'on', charges: 2 },
  ] as const) {
    it(`a global lab:config with every layer off in Redis: ${charges} charge(s) with the lab ${lab}`, async () => {
      expect(await redis?.get(LAB_KEY)).toBe(EVERYTHING_OFF);
      const orderNo = await createOrder(app(lab));
      // Two payments of one order with different keys: two intents, one order. Layers 3-4 stop the second.
      const first = await payByApi(app(lab), orderNo, `first-${orderNo}`);
      const second = await payByApi(app(lab), orderNo, `second-${orderNo}`);
      expect(first.status, first.text).toBe(201);
      expect(second.status, second.text).toBe(charges === 1 ? 200 : 201);
      expect(await chargesOf(databaseUrl, orderNo)).toHaveLength(charges);
    });
  }

  it('an order made with its own lab settings by an instance with the lab on is paid with every defence', async () => {
    const orderNo = await createOrder(app('on'), { lab: labFor(ALL_OFF, 200) });
    const first = await payByApi(app('off'), orderNo, `first-${orderNo}`);
    const second = await payByApi(app('off'), orderNo, `second-${orderNo}`);
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(await chargesOf(databaseUrl, orderNo)).toHaveLength(1);
  });

  it('no page or route shows a stack trace or the database password, to a visitor or to an API client', async () => {
    // Every answer of the hostile run is checked by send(); these are the pages a visitor can open, and the
    // answers an API client gets for the usual mistakes, on the locked-down app.
    const orderNo = await createOrder(app('off'));
    const url = app('off').url;
    const answers = [
      await send(`${url}/`),
      await send(`${url}/checkout/${orderNo}`),
      await send(`${url}/checkout/ord_0000000000000000`),
      await send(`${url}/scenarios`),
      await send(`${url}/no-such-page`),
      await send(`${url}/api/health`),
      await send(`${url}/api/orders/${orderNo}`),
      await send(`${url}/api/payments`, { method: 'POST', body: '{' }),
      await send(`${url}/api/payments`, { method: 'GET' }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 404, 200, 404, 200, 200, 400, 405]);
  });
});
