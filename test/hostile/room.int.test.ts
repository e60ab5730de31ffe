// Hostile test 11, a workshop room: the app configured as exposed to a network (HOST=0.0.0.0; in the test
// it still listens on loopback only) with a presenter's secret and tight rate limits. What an attendee, or a
// page of another site, must not be able to do to everyone else: change or reset the global lab, read or
// clear everyone's timeline, crash the app, read or pay another caller's order, post a form or text/plain to
// a JSON route, or flood the server with orders.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_FAULTS } from '../../lib/lab/settings.ts';
import { type App, expectProblem, hostilePort, ownDatabase, send, startTestApp } from './harness.ts';
import { anyText } from './inputs.ts';

const SECRET = 'presenter-secret-for-the-room';
/** Callers of this run's own: rate counts and keys live in Redis for a minute or a day. */
const RUN = Date.now().toString(36);
let app: App | undefined;
let redis: Redis | undefined;
let savedLab: string | null = null;

beforeAll(async () => {
  // The global lab settings live in a Redis database other test files of this worker use too: put back after.
  redis = new Redis(process.env.REDIS_URL ?? '');
  savedLab = await redis.get('lab:config');
  const databaseUrl = await ownDatabase('payonce_hostile_room');
  app = await startTestApp({
    port: hostilePort(3137),
    databaseUrl,
    redisUrl: process.env.REDIS_URL ?? '',
    instanceName: 'hostile-room',
    env: {
      HOST: '0.0.0.0',
      LAB_SECRET: SECRET,
      RATE_LIMIT_ORDERS_PER_MINUTE: '5',
      RATE_LIMIT_PAYMENTS_PER_MINUTE: '1000',
    },
  });
});

afterAll(async () => {
  await app?.stop();
  if (savedLab === null) await redis?.del('lab:config');
  else await redis?.set('lab:config', savedLab);
  await redis?.quit();
});

const url = (path: string) => `${app?.url ?? ''}${path}`;
const json = { 'content-type': 'application/json' };
const presenter = { authorization: `Bearer ${SECRET}` };

/** A browser session of the room: the cookie the app gives a first visit. */
async function attendee(): Promise<string> {
  const page = await fetch(url('/'), { redirect: 'manual' });
  const cookie = page.headers.getSetCookie().find((line) => /^(__Host-)?sid=/.test(line));
  expect(cookie, 'a first visit gets a session').toBeDefined();
  return (cookie ?? '').split(';')[0] ?? '';
}

describe('exposed to a room', () => {
  it('the room’s actions need the presenter’s secret; an attendee changes only their own lab', async () => {
    const patch = JSON.stringify({ layers: { stateMachine: false } });
    expectProblem(await send(url('/api/lab/config'), { method: 'PUT', headers: json, body: patch }), 401);
    expectProblem(await send(url('/api/lab/reset'), { method: 'POST' }), 401);
    expectProblem(await send(url('/api/lab/timeline'), { method: 'DELETE' }), 401);
    expectProblem(await send(url('/api/lab/timeline')), 401);
    expectProblem(await send(url('/api/lab/config?scope=global'), { method: 'PUT', headers: json, body: patch }), 401);
    const room = await send(url('/lab/room'));
    expect(room.text).toContain('Open the room');
    // Not the room's view: its counters are not drawn. (Their labels are in every page's messages, the
    // language's words for the client components, so the test looks for the rendered counter, not its label.)
    expect(room.text).not.toContain('data-testid="attendees"');
    // The same door in Chinese, for a browser that asks for it.
    const zh = await send(url('/lab/room'), { headers: { 'accept-language': 'zh-CN,zh;q=0.9' } });
    expect(zh.text).toContain('<html lang="zh-CN"');
    expect(zh.text).toContain('打开全场视图');
    expect(zh.text).not.toContain('data-testid="attendees"');

    // The presenter may; the global settings change.
    const global = await send(url('/api/lab/config'), {
      method: 'PUT',
      headers: { ...json, ...presenter },
      body: patch,
    });
    expect(global.status).toBe(200);
    expect((global.json() as { layers: { stateMachine: boolean } }).layers.stateMachine).toBe(false);
    expect((await send(url('/api/lab/reset?scope=global'), { method: 'POST', headers: presenter })).status).toBe(200);

    // An attendee's own lab: theirs to change, except the faults that stop the app for everybody.
    const cookie = await attendee();
    const mine = await send(url('/api/lab/config'), { method: 'PUT', headers: { ...json, cookie }, body: patch });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('x-lab-scope')).toBe('mine');
    // Each fault that stops a process everybody uses: the app's two crashes, and the receipt worker's (issue 28:
    // an attendee once killed the shared worker 19 times in 100 s with it).
    for (const fault of SHARED_FAULTS) {
      const crash = JSON.stringify({ faults: { [fault]: true } });
      expectProblem(
        await send(url('/api/lab/config'), { method: 'PUT', headers: { ...json, cookie }, body: crash }),
        401,
      );
      expectProblem(
        await send(url('/api/orders'), {
          method: 'POST',
          headers: { ...json, 'x-client-id': `mallory-${RUN}` },
          body: JSON.stringify({ lab: { faults: { [fault]: true } } }),
        }),
        401,
      );
    }
    // The global settings did not move.
    const after = await send(url('/api/lab/config?scope=global'));
    expect((after.json() as { layers: { stateMachine: boolean } }).layers.stateMachine).toBe(true);
  });

  it('another site’s page cannot post for a visitor; JSON routes take JSON only', async () => {
    const cookie = await attendee();
    const evil = { cookie, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' };
    expectProblem(await send(url('/api/lab/reset'), { method: 'POST', headers: evil }), 403);
    expectProblem(await send(url('/api/orders'), { method: 'POST', headers: { ...evil, ...json }, body: '{}' }), 403);
    const plain = { 'content-type': 'text/plain', 'x-client-id': `alice-${RUN}` };
    expectProblem(await send(url('/api/orders'), { method: 'POST', headers: plain, body: '{}' }), 415);
    expectProblem(
      await send(url('/api/payments'), {
        method: 'POST',
        headers: { ...plain, 'idempotency-key': 'k' },
        body: '{"orderNo":"ord_0000000000000000","amountCents":1}',
      }),
      415,
    );
  });

  it('an order belongs to its caller: anyone else is told it does not exist', async () => {
    expectProblem(await send(url('/api/orders'), { method: 'POST', headers: json, body: '{}' }), 400); // no caller
    const created = await send(url('/api/orders'), {
      method: 'POST',
      headers: { ...json, 'x-client-id': `alice-${RUN}` },
      body: '{}',
    });
    expect(created.status).toBe(201);
    const { orderNo } = created.json() as { orderNo: string };
    const as = (client: string) => ({ 'x-client-id': `${client}-${RUN}` });
    expect((await send(url(`/api/orders/${orderNo}`), { headers: as('alice') })).status).toBe(200);
    expectProblem(await send(url(`/api/orders/${orderNo}`), { headers: as('bob') }), 404);
    expectProblem(await send(url(`/api/tokens?orderNo=${orderNo}`), { headers: as('bob') }), 404);
    const pay = (client: string) =>
      send(url('/api/payments'), {
        method: 'POST',
        headers: { ...json, ...as(client), 'idempotency-key': `k-${client}-${orderNo}` },
        body: JSON.stringify({ orderNo, amountCents: 4200 }),
      });
    expectProblem(await pay('bob'), 404);
    expect((await send(url(`/checkout/${orderNo}`))).status).toBe(404); // a browser without the order's link
    expect((await pay('alice')).status).toBe(201);
  });

  it('order creation is limited per caller: the sixth in a minute is a 429 with Retry-After', async () => {
    const carol = `carol-${Date.now()}`; // the count lives in Redis for a minute: a name of this run's own
    const create = () =>
      send(url('/api/orders'), { method: 'POST', headers: { ...json, 'x-client-id': carol }, body: '{}' });
    for (let i = 0; i < 5; i++) expect((await create()).status).toBe(201);
    const refused = await create();
    expectProblem(refused, 429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another caller is not limited by carol.
    const dave = await send(url('/api/orders'), {
      method: 'POST',
      headers: { ...json, 'x-client-id': 'dave' },
      body: '{}',
    });
    expect(dave.status).toBe(201);
  });
});

describe('the new pages and routes, fuzzed', () => {
  /** Percent-encodes every byte of the UTF-8 form. */
  const encoded = (text: string) =>
    [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

  it('answer anything with a 2xx, 3xx or 4xx, never a 5xx or a trace', async () => {
    const cookie = await attendee();
    await fc.assert(
      fc.asyncProperty(
        anyText,
        fc.constantFrom(
          (text: string) => `/problems/${encoded(text)}`,
          (text: string) => `/lab/room?secret=${encoded(text)}`,
          (text: string) => `/limited?seconds=${encoded(text)}`,
          (text: string) => `/api/lab/config?scope=${encoded(text)}`,
          (text: string) => `/api/lab/config?orderNo=${encoded(text)}`,
          (text: string) => `/api/lab/timeline?scope=room&after=${encoded(text)}`,
          (text: string) => `/checkout/ord_0123456789abcdef?join=${encoded(text)}`,
          (text: string) => `/api/docs?${encoded(text)}`,
        ),
        async (text, path) => {
          const answer = await send(url(path(text)), { headers: { cookie } });
          expect(answer.status, `${path(text).slice(0, 160)} → ${answer.status}`).toBeLessThan(500);
        },
      ),
      { numRuns: 120 },
    );
  });
});
