// `npm run bench`: the benchmarks, against the production build on loopback, with autocannon as the load
// generator. Every figure is reported as a ratio to references measured in the same run (an empty route:
// Next.js's ceiling; a hand-written ideal guard with ioredis + pg; the straight line, the guarded payment's own stores
// called by hand), never as an absolute alone.
// Results: bench/results.md (with the machine, the versions and the date) and bench/results.json.
//   1. ceiling, ideal, straight line vs the guarded     4. cost per payment and per refund: Redis commands, DB round trips
//   2. guard overhead: all layers on vs all off        5. a peer: @aws-lambda-powertools/idempotency
//   3. duplicate storm: 1,000 requests, 100 orders        (CachePersistenceLayer) vs layer 2
//   1, last: the two guards alone, in a process without HTTP or Next.js: their CPU a payment (lib/bench/guard-alone.ts)
//   6. chaos storm: callers, faults, crashes and outages at once; invariants checked in SQL (lib/chaos-storm.ts)
// Its parts: lib/bench/ (plan, drive, cost, peer, report) and lib/chaos-storm.ts with lib/chaos/.
//   7. cost as data grows: 10^3 and 10^6 orders, a day of request keys, the background jobs (lib/bench/scale.ts)
//   8. replicated PostgreSQL (Patroni): the payment with replication asynchronous and synchronous (lib/bench/replication.ts)
// `BENCH_ONLY=chaos npm run bench` runs section 6 alone and writes bench/results.chaos.md and .json instead,
// so that a partial run never overwrites the full results; `BENCH_ONLY=scale` section 7 (bench/results.scale.*); `BENCH_ONLY=replication` section 8 (bench/results.replication.*, and its
// section of bench/results.md, dated). A broken invariant fails the run (exit code 1).
import { rmSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ALL_LAYERS_OFF } from '../lib/lab/settings.ts';
import { costOf, payAt } from './lib/bench/cost.ts';
import { createOrders, freshPayments, measureInTurns, postLoad, run, say, stopApp } from './lib/bench/drive.ts';
import { measureGuardAlone } from './lib/bench/guard-alone.ts';
import { peerBenchmark } from './lib/bench/peer.ts';
import { BASE, CONNECTIONS, type Load, log, ONLY, PORTS, SECONDS, WARMUP_SECONDS } from './lib/bench/plan.ts';
import { measureRatios, type Ratios } from './lib/bench/ratio.ts';
import { measureReplication } from './lib/bench/replication.ts';
import {
  type BenchResults,
  type Cost,
  versions,
  writeChaosOnly,
  writeReplicationOnly,
  writeResults,
  writeScaleOnly,
} from './lib/bench/report.ts';
import { measureScale } from './lib/bench/scale.ts';
import { describeFailures, runChaosStorm } from './lib/chaos-storm.ts';
import { applyMigrations } from './lib/migrations.ts';
import { buildApp, buildIsStale, nextEnv, startApp, waitForApp } from './lib/next-app.ts';
import { ROOT } from './lib/paths.ts';
import { startServices } from './lib/services.ts';

async function main(): Promise<void> {
  if (ONLY !== undefined && !['chaos', 'scale', 'replication'].includes(ONLY)) {
    throw new Error(`BENCH_ONLY: unknown section "${ONLY}" (known: chaos, scale, replication)`);
  }
  rmSync(path.join(ROOT, '.data/bench'), { recursive: true, force: true });
  const services = await startServices({
    profile: 'bench',
    dataDir: '.data',
    postgresPort: PORTS.postgres,
    redisPort: PORTS.redis,
    log,
  });
  // The chaos storm restarts both servers under these clients: an idle client's error must not end the run.
  const db = new pg.Pool({ connectionString: services.databaseUrl, max: 4 });
  db.on('error', () => {});
  const redis = new Redis(services.redisUrl);
  redis.on('error', () => {});
  try {
    await applyMigrations(services.databaseUrl);
    // The load is the point: no per-caller rate limit, no retention job.
    const appEnv = nextEnv({
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
      RATE_LIMIT_ORDERS_PER_MINUTE: '0',
      RATE_LIMIT_PAYMENTS_PER_MINUTE: '0',
      RETENTION_DAYS: '0',
    });
    if (buildIsStale()) buildApp(appEnv);
    // Section 1's last measure, the guard alone, first: processes of their own, with no app instance running yet.
    const guardAlone = ONLY === undefined ? await measureGuardAlone(services) : undefined;
    const measured = ONLY === undefined ? await measureThroughput(db, redis, services.redisUrl, appEnv) : undefined;
    // 7. Cost as data grows: instances of its own on databases of its own, the one above stopped.
    const scaleOf = () =>
      measureScale({
        serverUrl: services.databaseUrl,
        redisUrl: services.redisUrl,
        appEnv: appEnv as NodeJS.ProcessEnv,
      });
    if (ONLY === 'scale') {
      writeScaleOnly(await scaleOf(), await versions(db, redis));
      return;
    }
    // 8. Replicated PostgreSQL: a topology and an app of its own.
    const replicationOf = () =>
      measureReplication({
        redisUrl: services.redisUrl,
        bankDatabaseUrl: services.databaseUrl,
        appEnv: appEnv as NodeJS.ProcessEnv,
      });
    if (ONLY === 'replication') {
      writeReplicationOnly(await replicationOf(), await versions(db, redis));
      return;
    }
    const scale = measured ? await scaleOf() : undefined;
    const replication = measured ? await replicationOf() : undefined;

    // 6. The chaos storm, last: it kills the app and restarts the servers. It runs an app of its own on the
    // same port (the one above is stopped by now), under an INSTANCE_NAME of its own.
    const chaos = await runChaosStorm({
      databaseUrl: services.databaseUrl,
      port: PORTS.app,
      appEnv,
      servers: services.embedded,
      logDir: path.join(ROOT, '.data/bench'),
      log,
    });
    const v = await versions(db, redis);
    if (measured && guardAlone && scale && replication) {
      writeResults({ ...measured, guardAlone, scale, replication, chaos }, v);
    } else writeChaosOnly(chaos, v);
    // The results are written first (the failure is in them too), then the run fails, naming the orders.
    if (chaos.checks.some((check) => check.failing.length > 0)) {
      console.error(describeFailures(chaos));
      throw new Error(
        "chaos storm: an invariant failed for the orders above (every request of the storm: .data/bench/chaos-storm.json; the app's log: .data/bench/chaos-app.log)",
      );
    }
  } finally {
    await db.end();
    redis.disconnect();
    await services.stop();
  }
}

/** Sections 1-5, on an app instance of their own, stopped before the chaos storm starts its own. */
async function measureThroughput(
  db: pg.Pool,
  redis: Redis,
  redisUrl: string,
  appEnv: NodeJS.ProcessEnv,
): Promise<Omit<BenchResults, 'chaos' | 'scale' | 'replication' | 'guardAlone'>> {
  const app = startApp({
    port: PORTS.app,
    env: { ...appEnv, BENCH_ROUTES: 'true', INSTANCE_NAME: 'bench' },
    quiet: true,
  });
  try {
    await waitForApp(PORTS.app, 60_000, app);
    await fetch(`${BASE}/api/lab/reset`, { method: 'POST' });
    // More fresh orders than the fastest route can use (800 a second), for each generator's measurements.
    const perRun = 800 * (SECONDS + WARMUP_SECONDS);
    log(
      `${cpus().length} cores; ${CONNECTIONS} connections, ${SECONDS} s per measurement after ${WARMUP_SECONDS} s of warm-up`,
    );

    const measure = async (label: string, load: (seconds: number) => Promise<Load>, warmup = WARMUP_SECONDS) => {
      await load(warmup);
      const result = await load(SECONDS);
      say(label, result);
      return result;
    };

    // 1. The ratios to the straight line and the ideal: this instance (the lab on) and one with the lab off (no lab settings to read, no
    // spans recorded, no timeline to write), everything else equal, measured in the same turns (ratio.ts). Both
    // instances come to it with the same history: the empty route's ten thousand requests, measured first until
    // 2026-12-05, left this instance slower at the guarded payment against the ideal than the fresh one (with the
    // two instances' labs swapped, the difference stayed with this instance: 0.90 here, 0.95 there).
    const labOff = startApp({
      port: PORTS.app + 1,
      env: { ...appEnv, BENCH_ROUTES: 'true', INSTANCE_NAME: 'bench-lab-off', LAB_ENABLED: 'false' },
      quiet: true,
    });
    labOff.once('exit', (code, signal) => log(`the lab-off instance exited (${signal ?? `code ${code}`})`));
    let ratios: Ratios;
    let paymentLabOff: Cost;
    let straightLine: Cost;
    try {
      await waitForApp(PORTS.app + 1, 60_000, labOff);
      ratios = await measureRatios({ db, redis, labOn: app, labOff });
      // 4, with the lab off: what a payment costs there (its order is not read before the claim: pay.ts).
      const orders = await createOrders(db, redis, 200, null);
      const base = `http://127.0.0.1:${PORTS.app + 1}`;
      paymentLabOff = await costOf(
        redis,
        orders.length,
        (i) => payAt(base, orders[i] as string, `c-${orders[i]}`),
        base,
      );
      // The straight line there: decision 039's yardstick must take the lab-off payment's round trips.
      const straightOrders = await createOrders(db, redis, 200, null);
      straightLine = await costOf(
        redis,
        straightOrders.length,
        (i) => payAt(base, straightOrders[i] as string, `sc-${straightOrders[i]}`, '/api/bench/straight-line'),
        base,
      );
    } finally {
      await stopApp(labOff);
    }

    // The ceiling: Next.js's empty route, on this instance.
    const empty = await measure('empty route', (seconds) =>
      run({ url: `${BASE}/api/bench/empty`, connections: CONNECTIONS, duration: seconds }),
    );

    // 2. All layers on against all off, on this instance.
    const onNext = freshPayments(await createOrders(db, redis, perRun, null));
    const offNext = freshPayments(await createOrders(db, redis, perRun, { layers: ALL_LAYERS_OFF }));
    const [guardedBesideOff, unguarded] = (await measureInTurns([
      {
        label: 'POST /api/payments, all layers on (beside all off)',
        load: (seconds) => postLoad('/api/payments', onNext, { seconds }),
      },
      {
        label: 'POST /api/payments, all layers off',
        load: (seconds) => postLoad('/api/payments', offNext, { seconds }),
      },
    ])) as [Load, Load];

    // 3. Duplicate storm: 100 orders, 10 requests each (same key: a client's retries), shuffled, 50 at once.
    const stormOrders = await createOrders(db, redis, 100, null);
    const storm = stormOrders.flatMap((order) => Array.from({ length: 10 }, () => order));
    for (let i = storm.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [storm[i], storm[j]] = [storm[j] as string, storm[i] as string];
    }
    let stormIndex = 0;
    const stormStarted = performance.now();
    const stormLoad = await postLoad(
      '/api/payments',
      () => {
        const order = storm[stormIndex++];
        return order ? { body: { orderNo: order, amountCents: 4200 }, key: `storm-${order}` } : undefined;
      },
      { amount: storm.length },
    );
    const stormSeconds = (performance.now() - stormStarted) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const { rows: stormCharges } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM bank_charges WHERE merchant_ref = ANY($1)',
      [stormOrders],
    );
    const { rows: stormPaid } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders WHERE order_no = ANY($1) AND status = 'PAID'`,
      [stormOrders],
    );
    log(
      `storm: ${stormLoad.total} requests in ${stormSeconds.toFixed(1)} s, charges ${stormCharges[0]?.n} for 100 orders`,
    );

    // 4. Cost per payment, per duplicate and per refund (sequential, so the counters belong to these requests only).
    const costOrders = await createOrders(db, redis, 200, null);
    const pay = (order: string, key: string) => payAt(BASE, order, key);
    const payment = await costOf(redis, costOrders.length, (i) => pay(costOrders[i] as string, `c-${costOrders[i]}`));
    const replay = await costOf(redis, costOrders.length, (i) => pay(costOrders[i] as string, `c-${costOrders[i]}`));
    const otherKey = await costOf(redis, costOrders.length, (i) => pay(costOrders[i] as string, `d-${costOrders[i]}`));
    // A refund of each order just paid: its own request id, then the same again (a retry after it finished).
    const refund = (order: string, key: string) =>
      fetch(`${BASE}/api/refunds`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-client-id': 'bench' },
        body: JSON.stringify({ orderNo: order, amountCents: 500 }),
      });
    const refundCost = await costOf(redis, costOrders.length, (i) =>
      refund(costOrders[i] as string, `r-${costOrders[i]}`),
    );
    const refundReplay = await costOf(redis, costOrders.length, (i) =>
      refund(costOrders[i] as string, `r-${costOrders[i]}`),
    );
    const idealCostOrders = await createOrders(db, redis, 200, null);
    const idealCost = await costOf(redis, idealCostOrders.length, (i) =>
      payAt(BASE, idealCostOrders[i] as string, `ic-${idealCostOrders[i]}`, '/api/bench/ideal'),
    );

    // 5. The peer, in this process, on the same Redis.
    const peer = await peerBenchmark(redisUrl, String(appEnv.DATABASE_URL));
    log(`peer: layer 2 ${peer.oursPerSecond} ops/s, powertools ${peer.peerPerSecond} ops/s`);

    return {
      empty,
      ...ratios,
      unguarded,
      guardedBesideOff,
      storm: { ...stormLoad, seconds: stormSeconds, charges: stormCharges[0]?.n, paid: stormPaid[0]?.n },
      cost: {
        payment,
        paymentLabOff,
        straightLine,
        replay,
        otherKey,
        ideal: idealCost,
        refund: refundCost,
        refundReplay,
      },
      peer,
    };
  } finally {
    await stopApp(app);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`[bench] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
