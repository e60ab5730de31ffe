// Hostile test 8, the PostgreSQL outage: a PostgreSQL server of the test's own is stopped under a running
// app, then started again on the same port and data folder. While it is down every answer is a clear 503
// problem naming the database, never a stack trace, and nothing is charged; once it is back the same process
// serves again, and the customer's retry with the same Idempotency-Key pays: no claim is left stuck in Redis.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../scripts/lib/migrations.ts';
import { type RunningService, startEmbeddedPostgres } from '../../scripts/lib/postgres.ts';
import {
  ALL_ON,
  type App,
  chargesOf,
  createOrder,
  expectProblem,
  hostilePort,
  labFor,
  payByApi,
  send,
  startTestApp,
  until,
} from './harness.ts';

const APP_PORT = hostilePort(3132);
// Not 25460: a second suite beside this one (TEST_PORT_OFFSET=1000) put its PostgreSQL on 26460, the first suite's
// Redis of redis-outage.int.test.ts, and failed to start it.
const POSTGRES_PORT = hostilePort(25440);

let dataDir = '';
let postgres: RunningService | undefined;
let app: App | undefined;
let databaseUrl = '';

const startPostgres = () =>
  startEmbeddedPostgres({
    dataDir: path.join(dataDir, 'postgres'),
    port: POSTGRES_PORT,
    database: 'payonce_hostile',
    durable: false,
  });

async function stopPostgres(): Promise<void> {
  await postgres?.stop();
  postgres = undefined;
}

async function sql(text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * Makes the bank's ledger write for one order hang (a trigger that sleeps inside the INSERT), so that the
 * payment is caught exactly there: its key and its order claimed, the charge not yet written. The sleep is
 * in the writing session itself, so stopping the server ends it and nothing else can let the write through.
 */
async function slowLedger(orderNo: string, on: boolean): Promise<void> {
  if (!/^ord_[0-9a-z]{16}$/.test(orderNo)) throw new Error(`not an order number: ${orderNo}`);
  if (on) {
    await sql(`CREATE FUNCTION hostile_slow_ledger() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN PERFORM pg_sleep(60); RETURN NEW; END $$`);
    await sql(`CREATE TRIGGER hostile_slow_ledger BEFORE INSERT ON bank_charges FOR EACH ROW
      WHEN (NEW.merchant_ref = '${orderNo}') EXECUTE FUNCTION hostile_slow_ledger()`);
  } else {
    await sql('DROP TRIGGER hostile_slow_ledger ON bank_charges');
    await sql('DROP FUNCTION hostile_slow_ledger()');
  }
}

const waitsAtTheBank = async () => {
  const { rows } = await sql("SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'");
  return rows.length > 0 ? true : undefined;
};

const running = (): App => {
  if (!app) throw new Error('the app is not running');
  return app;
};

const health = async () => {
  const answer = await send(`${running().url}/api/health`);
  return { status: answer.status, body: answer.json() as Record<string, unknown> };
};

async function untilHealth(status: 200 | 503): Promise<Record<string, unknown>> {
  return until(`health to answer ${status}`, async () => {
    const now = await health();
    return now.status === status ? now.body : undefined;
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'payonce-hostile-pg-'));
  await chmod(dataDir, 0o755); // PostgreSQL runs as its own user and must reach its folder
  postgres = await startPostgres();
  databaseUrl = postgres.url;
  await applyMigrations(databaseUrl);
  app = await startTestApp({
    port: APP_PORT,
    databaseUrl,
    redisUrl: process.env.REDIS_URL ?? '',
    instanceName: 'hostile-pg',
  });
});

// A test that failed half-way may have left the server stopped; the next one starts from a running one.
beforeEach(async () => {
  postgres ??= await startPostgres();
});

afterAll(async () => {
  await app?.stop();
  await stopPostgres();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('PostgreSQL stops while the app runs', () => {
  it('503 naming the database from health and from every route, nothing charged, then recovery', async () => {
    const orderNo = await createOrder(running(), { lab: labFor(ALL_ON) });
    const key = `pg-outage-${orderNo}`;
    expect(await health()).toEqual({ status: 200, body: { status: 'ok', redis: 'ok', database: 'ok' } });

    await stopPostgres();
    expect(await untilHealth(503)).toMatchObject({ status: 503, database: 'down', redis: 'ok' });

    const refused = await payByApi(running(), orderNo, key);
    expect(expectProblem(refused, 503)).toMatchObject({ service: 'database' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Every other route that reads the database says the same, and none of them shows how it failed inside.
    const url = running().url;
    for (const answer of [
      await send(`${url}/api/orders`, { method: 'POST', body: '{}' }),
      await send(`${url}/api/orders/${orderNo}`),
      await send(`${url}/api/tokens?orderNo=${orderNo}`, { headers: { 'x-client-id': 'hostile-shop' } }),
    ]) {
      expect(expectProblem(answer, 503)).toMatchObject({ service: 'database' });
    }

    postgres = await startPostgres();
    expect(await untilHealth(200)).toEqual({ status: 'ok', redis: 'ok', database: 'ok' });
    // The outage charged nothing, and the retry with the same key pays, once.
    expect(await chargesOf(databaseUrl, orderNo)).toEqual([]);
    const paid = await payByApi(running(), orderNo, key);
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json()).toMatchObject({ status: 'PAID', orderNo });
    expect(await chargesOf(databaseUrl, orderNo)).toHaveLength(1);
    expect(running().child.exitCode).toBeNull();
  });

  describe('PostgreSQL dies while a payment waits at the bank', () => {
    const midPayment = { orderNo: '', key: '' };

    it('the payment is answered "in progress", nothing is charged, and the reconciler gives the order back', async () => {
      const orderNo = await createOrder(running(), { lab: labFor(ALL_ON) });
      const key = `pg-mid-payment-${orderNo}`;
      Object.assign(midPayment, { orderNo, key });
      // The payment has claimed its key and the order and waits at the bank's write, which the outage cuts
      // off. Whether the bank charged is now unknown to the app.
      await slowLedger(orderNo, true);
      const inFlight = payByApi(running(), orderNo, key).then(
        (answer) => answer,
        (error: Error) => error,
      );
      await until('the payment to wait at the bank', waitsAtTheBank);
      await stopPostgres();
      const first = await inFlight;
      if (first instanceof Error) throw first;
      // Not a charge and not a final failure: the honest answer is "in progress, retry shortly".
      expect(expectProblem(first, 409)).toMatchObject({ title: 'Payment in progress' });

      postgres = await startPostgres();
      await untilHealth(200);
      await slowLedger(orderNo, false);
      expect(await chargesOf(databaseUrl, orderNo)).toEqual([]);
      // The claim is abandoned: the reconciler asks the bank, finds no charge and gives the order back.
      await until('the reconciler to release the order', async () => {
        const order = (await send(`${running().url}/api/orders/${orderNo}`)).json() as { status: string };
        return order.status === 'PENDING' ? true : undefined;
      });
    });

    // Found by this test: the failed bank call marks the request key "unknown" in Redis (kept 24 h). The
    // reconciler settles the order from the database side (no charge: PENDING again) but cannot clear a key
    // it does not know, so a retry used to find the key "unknown", get 'idle' from the reconciler and answer
    // 409 "in progress" for a day. Now the retry asks the bank itself and, with no charge, frees the key.
    it('a retry with the same Idempotency-Key then pays, once', async () => {
      const { orderNo, key } = midPayment;
      expect(orderNo).not.toBe('');
      // The customer retries with the same key, as Retry-After asks, for well over what "shortly" means.
      const retry = await until(
        'a retry answered with something other than "in progress"',
        async () => {
          const answer = await payByApi(running(), orderNo, key);
          return answer.status === 409 ? undefined : answer;
        },
        6_000,
      );
      expect(retry.status, retry.text).toBe(201);
      expect(await chargesOf(databaseUrl, orderNo)).toHaveLength(1);
    });
  });
});
