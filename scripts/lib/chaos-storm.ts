// The chaos storm (`npm run bench`, section 6): many callers pay many orders at once over HTTP while the
// bank, the app and both servers fail under them, then SQL checks that no card was charged twice and that
// every order and every answer agrees with the bank's ledger. The other sections measure speed; this one
// asks whether the guarantees hold when everything goes wrong at once, as it does in production.
//   1. orders, each with a configuration of the defences (every one on; every one but the bank's key; a
//      database layer or the bank's key alone, or two together) and one fault each, a short lease (drawn with a
//      seeded RNG: the seed is printed)
//   2. for each order, several callers at once, each with its own X-Client-Id and Idempotency-Key, each
//      retrying with the same key on 409, 503, a dropped connection or its own timeout, until it gets a
//      final answer (201/200/402) or gives up at its deadline; callers still going well past every deadline
//      (chaos/plan.ts, STORM_DRAIN_MS) end the run with an error naming them and what each was doing
//   3. meanwhile Redis (keeping no data: it comes back empty) and PostgreSQL are each stopped and started again;
//      the crash faults SIGKILL the app (some of them its first taker's attempt too), and so do a few kills at
//      random moments (whatever is in flight dies: takeovers, the reconciler's sweep); it is started again (as
//      the demo's supervisor does) under the same INSTANCE_NAME
//   2½. once a caller is told an order is paid, for a share of the orders, its refunds are asked for in the same
//      storm: one refund by two operators at once (one request id), a second of the same amount, and a third that
//      with both would pass the charge; each caller retries with its request id (chaos/plan.ts, REFUND_INTENTS)
//   4½. every payment.paid event is relayed and delivered once to the receipt consumer
//   4. the storm over, the app's reconciler settles what is left: timed
//   5. the invariants, in SQL on the bench database; a failing order is printed with its history
// A fault hits an order's first attempt only (a "crash taker" fault its first taker too): once the order has been
// claimed (taken over), the storm takes the fault off the order's own settings (the attempts that claimed it read
// them already). A fault that hit every attempt
// would be a host that never recovers: an order whose every attempt stalls past its lease is taken over by
// the next one forever, and every retry of a crash order would kill the app again.
// This module runs the storm; its parts are chaos/plan.ts (what is drawn), chaos/drive.ts (the callers, the
// faults, the kills and the outages), chaos/invariants.ts (the SQL checks) and chaos/report.ts (the results).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  deliverReceipts,
  drained,
  faultTracker,
  insertOrders,
  keepAppRunning,
  launchCallers,
  type RefundCaller,
  refundOrder,
  restartServer,
  type Storm,
  type StormEvent,
  sleep,
  startClock,
  waitUntilSettled,
} from './chaos/drive.ts';
import { checkInvariants, checkRefundInvariants, historyOf } from './chaos/invariants.ts';
import {
  CHAOS_ORDERS,
  CONFIGURATIONS,
  KILLS_AT,
  LAUNCH_MS,
  POSTGRES_RESTART_AT,
  planOrders,
  planRefunds,
  REDIS_RESTART_AT,
  seededRandom,
} from './chaos/plan.ts';
import { type ChaosResults, summarize } from './chaos/report.ts';
import type { Restartable } from './services.ts';

export type { ChaosResults } from './chaos/report.ts';
export { chaosSection, describeFailures } from './chaos/report.ts';

/** Runs the storm (steps 1-5 of the header) and returns what it came to; the caller writes the report. */
export async function runChaosStorm(options: {
  databaseUrl: string;
  port: number;
  /** The app's environment (the service URLs); INSTANCE_NAME is the storm's. */
  appEnv: NodeJS.ProcessEnv;
  servers: { redis?: Restartable; postgres?: Restartable };
  /** Where the app's log and the storm's full record are written (.data/bench: not committed). */
  logDir: string;
  log: (line: string) => void;
}): Promise<ChaosResults> {
  const { log } = options;
  if (!Number.isInteger(CHAOS_ORDERS) || CHAOS_ORDERS < 1)
    throw new Error('BENCH_CHAOS_ORDERS: must be a whole number ≥ 1');
  const { redis, postgres } = options.servers;
  if (!redis || !postgres) throw new Error('the chaos storm restarts the embedded Redis and PostgreSQL: none started');
  const seed = Number(process.env.BENCH_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  // The plan is drawn first, so the seed repeats it; the callers' start offsets drawn later are timing only.
  const random = seededRandom(seed);
  const plan = planOrders(random, CHAOS_ORDERS);
  const orderNos = plan.map((o) => o.orderNo);
  // The orders to be refunded once paid: a draw of their own, so that the payments' plan is the seed's either way.
  const toRefund = planRefunds(seededRandom(seed + 1), plan);
  log(`chaos: seed ${seed} (BENCH_CHAOS_SEED=${seed} draws the same faults), ${plan.length} orders`);

  // The storm's own pool: its clients die with each PostgreSQL restart, and the pool must not take the
  // process down with them (an idle client's error is emitted on the pool).
  const db = new pg.Pool({ connectionString: options.databaseUrl, max: 4 });
  db.on('error', () => {});
  // The bench's earlier measurements left thousands of payment events in the outbox, never relayed (no worker
  // runs there): the storm delivers its own orders' receipts at the end, and would first relay and consume
  // those, past its minute. They are not the storm's to deliver.
  await db.query('UPDATE outbox SET published_at = now() WHERE published_at IS NULL');
  await insertOrders(db, plan);

  const clock = startClock();
  const events: StormEvent[] = [];
  const faults = faultTracker(db, plan, clock);
  const app = keepAppRunning({
    port: options.port,
    env: options.appEnv,
    logFile: path.join(options.logDir, 'chaos-app.log'),
    clock,
    events,
    beforeRestart: faults.clearNow,
  });
  try {
    await app.ready();
    const storm: Storm = { base: `http://127.0.0.1:${options.port}`, clock, events, log, unavailable: 0 };
    const stormStarted = clock();
    const refundCallers: RefundCaller[] = [];
    const refunded = new Set<string>();
    const { callers, done } = launchCallers(
      plan,
      storm,
      random,
      (order) => {
        const { layers } = CONFIGURATIONS[order.configuration];
        if (order.fault !== 'none' && !layers.stateMachine && !layers.uniqueConstraint) faults.clearSoon(order.orderNo);
      },
      // Once a caller is told the order is paid, its refunds are asked for, in the same storm.
      async (order, own) => {
        const paid = own.some(
          (c) => (c.final?.status === 200 || c.final?.status === 201) && c.final.paymentStatus === 'PAID',
        );
        if (!paid || !toRefund.has(order.orderNo)) return;
        refunded.add(order.orderNo);
        await refundOrder(order.orderNo, storm, random, refundCallers);
      },
    );
    let randomKills = 0;
    const [redisOutage, postgresOutage] = await Promise.all([
      sleep(REDIS_RESTART_AT * LAUNCH_MS).then(() => restartServer('Redis', redis, storm)),
      sleep(POSTGRES_RESTART_AT * LAUNCH_MS).then(() => restartServer('PostgreSQL', postgres, storm)),
      ...KILLS_AT.map((share) =>
        sleep(share * LAUNCH_MS).then(() => {
          if (app.kill()) randomKills++;
        }),
      ),
      drained(done, () => [...callers, ...refundCallers], storm.clock),
    ]);
    const stormMs = clock() - stormStarted;
    log(`chaos: storm over after ${(stormMs / 1000).toFixed(1)} s; waiting for every order to settle`);

    await app.revived();
    const settledMs = await waitUntilSettled(db, orderNos);
    await faults.stop();
    await deliverReceipts(options.databaseUrl, String(options.appEnv.REDIS_URL ?? ''), orderNos);
    const checks = [
      ...(await checkInvariants(db, orderNos, callers, settledMs !== null)),
      ...(await checkRefundInvariants(db, [...refunded], refundCallers)),
    ];
    const failingOrders = new Set(checks.flatMap((check) => check.failing));
    const failures = await Promise.all(
      plan
        .filter((o) => failingOrders.has(o.orderNo))
        .map((o) => historyOf(db, o, callers, faults.clearedAt, refundCallers)),
    );
    const { rows: refundRows } = await db.query<{ refunds: number; cents: number }>(
      `SELECT count(*)::int AS refunds, coalesce(sum(amount_cents), 0)::int AS cents FROM bank_refunds
       WHERE split_part(merchant_ref, '/', 1) = ANY($1)`,
      [[...refunded]],
    );
    const { rows: statusRows } = await db.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM orders WHERE order_no = ANY($1) GROUP BY 1',
      [orderNos],
    );
    // The order's fencing token rose past its first claim: another attempt or the reconciler took it over.
    const { rows: takenOver } = await db.query<{ order_no: string }>(
      'SELECT order_no FROM orders WHERE order_no = ANY($1) AND fence > 1',
      [orderNos],
    );
    const { rows: configurationRows } = await db.query<{ order_no: string; charges: number }>(
      `SELECT o.order_no, (SELECT count(*)::int FROM bank_charges c WHERE c.merchant_ref = o.order_no) AS charges
       FROM orders o WHERE o.order_no = ANY($1)`,
      [orderNos],
    );
    const chargesOf = new Map(configurationRows.map((row) => [row.order_no, row.charges]));
    const results = summarize({
      seed,
      plan,
      chargesOf,
      randomKills,
      callers,
      events,
      clearedAt: faults.clearedAt,
      appRestartMs: app.restartMs,
      redisOutage,
      postgresOutage,
      stormMs,
      settledMs,
      statuses: Object.fromEntries(statusRows.map((row) => [row.status, row.n])),
      takenOver: new Set(takenOver.map((row) => row.order_no)),
      checks,
      failures,
      refunds: { orders: refunded.size, callers: refundCallers, bank: refundRows[0] ?? { refunds: 0, cents: 0 } },
    });
    // The whole record (every request of every caller, the storm's events), to read a failure with.
    writeFileSync(
      path.join(options.logDir, 'chaos-storm.json'),
      `${JSON.stringify({ seed, events, plan, callers, refundCallers, clearedAt: Object.fromEntries(faults.clearedAt) }, null, 2)}\n`,
    );
    log(
      `chaos: ${results.requests} requests (${Object.entries(results.answers)
        .map(([name, n]) => `${name} ${n}`)
        .join(', ')}), ${results.appCrashes} app crashes, double charges ${results.doubleCharges}, ` +
        `settled ${settledMs === null ? 'NOT within the timeout' : `${(settledMs / 1000).toFixed(1)} s after`}, ` +
        `invariants ${failures.length === 0 ? 'hold' : `FAIL for ${failures.length} order(s)`}`,
    );
    return results;
  } finally {
    await faults.stop();
    await app.stop();
    await db.end();
  }
}
