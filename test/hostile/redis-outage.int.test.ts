// Hostile test 7, the Redis outage: a Redis server of the test's own is stopped under a running app, then
// started again on the same port.
//
// The design is to fail closed. Layers 1 and 2 (the checkout token, the request key) and the lab settings
// live in Redis; paying without them would mean paying without two of the four defences, and with lab
// settings nobody can see. So while Redis is down a payment is refused at once with a clear 503 problem
// (nothing charged, retry later), and health says which service is down. When Redis is back, the same
// process serves again: its client reconnects by itself, and nobody has to restart the app.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryOf } from '../../lib/health.ts';
import type { RunningService } from '../../scripts/lib/postgres.ts';
import { startRedisServer } from '../../scripts/lib/redis.ts';
import { ensureProgram, REDIS_SERVER } from '../../scripts/lib/system-programs.ts';
import {
  ALL_ON,
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
  until,
} from './harness.ts';

const APP_PORT = hostilePort(3131);
const REDIS_PORT = hostilePort(26460);

let dataDir = '';
let redis: RunningService | undefined;
let app: App | undefined;
let databaseUrl = '';
let orderNo = '';
const key = `redis-outage-${Date.now()}`;

const startRedis = () =>
  startRedisServer({ binary: ensureProgram(REDIS_SERVER, console.log), port: REDIS_PORT, dataDir, persist: false });

const running = (): App => {
  if (!app) throw new Error('the app is not running');
  return app;
};

const health = async () => {
  const answer = await send(`${running().url}/api/health`);
  return { status: answer.status, body: answer.json() as Record<string, unknown> };
};

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'payonce-hostile-redis-'));
  redis = await startRedis();
  databaseUrl = await ownDatabase('payonce_hostile_redis');
  app = await startTestApp({ port: APP_PORT, databaseUrl, redisUrl: redis.url, instanceName: 'hostile-redis' });
  orderNo = await createOrder(app, { lab: labFor(ALL_ON) });
});

afterAll(async () => {
  await app?.stop();
  await redis?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('Redis stops while the app runs', () => {
  it('health says 503 naming redis; a payment is refused at once with a 503 problem, nothing charged', async () => {
    expect(await health()).toEqual({ status: 200, body: { status: 'ok', redis: 'ok', database: 'ok' } });
    await redis?.stop();
    redis = undefined;

    const down = await until('health to report Redis down', async () => {
      const now = await health();
      return now.status === 503 ? now.body : undefined;
    });
    expect(down).toMatchObject({ status: 503, redis: 'down', database: 'ok', detail: 'redis is down' });

    const refused = await payByApi(running(), orderNo, key);
    const problem = expectProblem(refused, 503);
    expect(problem).toMatchObject({ service: 'redis', detail: expect.stringContaining('redis is unavailable') });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    expect(await chargesOf(databaseUrl, orderNo)).toEqual([]);
    const order = await send(`${running().url}/api/orders/${orderNo}`);
    expect(order.json()).toMatchObject({ status: 'PENDING', charges: [] });
  });

  it('Redis back on the same port: the same process serves again, and the payment goes through once', async () => {
    const pid = running().child.pid;
    redis = await startRedis();

    await until('health to report every service up', async () => ((await health()).status === 200 ? true : undefined));
    // The same key as the refused attempt: the refusal claimed nothing.
    const paid = await payByApi(running(), orderNo, key);
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json()).toMatchObject({ status: 'PAID', orderNo });
    // Layer 2 works again: the retry is a replay, not a second charge.
    const replay = await payByApi(running(), orderNo, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    expect(await chargesOf(databaseUrl, orderNo)).toHaveLength(1);
    expect(running().child.pid).toBe(pid);
    expect(running().child.exitCode).toBeNull();
  });
});

describe('Redis fills up to its maxmemory', () => {
  it('health says degraded near it and 503 at it, with the numbers; new orders get 503, nothing half-written (issue 28, finding 3)', async () => {
    const client = new Redis(redis?.url ?? '');
    try {
      const used = async () => memoryOf(String(await client.info('memory'))).usedBytes;
      // Near: maxmemory just above what is used (within NEAR_FULL of it).
      await client.config('SET', 'maxmemory', String(Math.ceil((await used()) / 0.95)));
      const near = await until('health to say Redis is nearly full', async () => {
        const now = await health();
        return now.body.redis === 'near-full' ? now : undefined;
      });
      expect(near.status).toBe(200);
      expect(near.body).toMatchObject({
        status: 'degraded',
        database: 'ok',
        redisMemory: { maxBytes: expect.any(Number) },
      });
      // Full: maxmemory below what is used; noeviction refuses every write.
      await client.config('SET', 'maxmemory', String(Math.floor((await used()) / 2)));
      const full = await until('health to say Redis is full', async () => {
        const now = await health();
        return now.status === 503 ? now : undefined;
      });
      expect(full.body).toMatchObject({ status: 503, redis: 'full', detail: expect.stringContaining('redis is full') });
      const before = await rowCounts(databaseUrl);
      const refused = await send(`${running().url}/api/orders`, {
        method: 'POST',
        headers: { 'x-client-id': 'hostile-full', 'idempotency-key': `full-${Date.now()}` },
        body: '{}',
      });
      expectProblem(refused, 503);
      expect(await rowCounts(databaseUrl)).toEqual(before);
    } finally {
      await client.config('SET', 'maxmemory', '256mb');
      await client.quit();
    }
    expect(await health()).toEqual({ status: 200, body: { status: 'ok', redis: 'ok', database: 'ok' } });
  });
});
