// The chaos storm (`npm run bench`, section 6): many callers pay many orders at once over HTTP while the
// bank, the app and both servers fail under them, then SQL checks that no card was charged twice and that
// every order and every answer agrees with the bank's ledger. The other sections measure speed; this one
// asks whether the guarantees hold when everything goes wrong at once, as it does in production.
//   1. orders, each with a configuration of the defences (every one on; every one but the bank's key; a
//      database layer or the bank's key alone, or two together) and one fault each, a short lease (drawn with a
//      seeded RNG: the seed is printed)
//   2. for each order, several callers at once, each with its own X-Client-Id and Idempotency-Key, each
//      retrying with the same key on 409, 503, a dropped connection or its own timeout, until it gets a
//      final answer (201/200/402) or gives up at its deadline
//   3. meanwhile Redis (keeping no data: it comes back empty) and PostgreSQL are each stopped and started again;
//      the crash faults SIGKILL the app (some of them its first taker's attempt too), and so do a few kills at
//      random moments (whatever is in flight dies: takeovers, the reconciler's sweep); it is started again (as
//      the demo's supervisor does) under the same INSTANCE_NAME
//   4½. every payment.paid event is relayed and delivered once to the receipt consumer
//   4. the storm over, the app's reconciler settles what is left: timed
//   5. the invariants, in SQL on the bench database; a failing order is printed with its history
// A fault hits an order's first attempt only (a "crash taker" fault its first taker too): once the order has been
// claimed (taken over), the storm takes the fault off the order's own settings (the attempts that claimed it read
// them already). A fault that hit every attempt
// would be a host that never recovers: an order whose every attempt stalls past its lease is taken over by
// the next one forever, and every retry of a crash order would kill the app again.
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  ALL_LAYERS_OFF,
  ALL_LAYERS_ON,
  DEFAULT_LAB_SETTINGS,
  type Faults,
  type LabSettingsPatch,
  LabSettingsPatchSchema,
  type Layers,
} from '../../lib/lab/settings.ts';
import { newOrderNo } from '../../lib/payments/order-no.ts';
import { startApp, waitForApp } from './next-app.ts';
import type { Restartable } from './services.ts';

/** Orders in the storm (BENCH_CHAOS_ORDERS scales it; the time it takes grows with the crash orders). */
export const CHAOS_ORDERS = Number(process.env.BENCH_CHAOS_ORDERS ?? 150);
/** Callers per order, all at once: a customer's app, its backend, a queue's redelivery, say. */
const CALLERS = ['chaos-shop-a', 'chaos-shop-b', 'chaos-shop-c'];
/** Short, so that a stalled or dead attempt's claim is taken over within the storm. */
const LEASE_MS = 1_000;
/** The orders are started evenly over this window; the outages fall inside it. */
const LAUNCH_MS = 20_000;
const REDIS_RESTART_AT = 0.3;
const POSTGRES_RESTART_AT = 0.65;
/** Each server stays down at least this long, and until a payment has met the outage (at most OUTAGE_MAX_MS). */
const OUTAGE_MS = 1_000;
const OUTAGE_MAX_MS = 5_000;
/** A caller's own timeout per request; it then retries with the same key. */
const CLIENT_TIMEOUT_MS = 8_000;
/**
 * A caller gives up this long after its first request: a well-behaved client does not retry forever. What
 * its give-up leaves in doubt, the app's reconciler must settle with nobody asking.
 */
const CALLER_DEADLINE_MS = 30_000;
/** After a refused or dropped connection: 250 ms, doubling up to 2 s (a restarting app is not hammered). */
const RECONNECT_MS = { first: 250, max: 2_000 };
/** The reconciler runs every 5 s, and "no charge yet" waits for the bank's 10 s settlement window. */
const SETTLE_TIMEOUT_MS = 60_000;
const AMOUNT_CENTS = 4_200;
/** The app's name in attempt ids: fixed, so that the restarted app knows its previous life's claims. */
const INSTANCE_NAME = 'bench-chaos';
const NO_FAULTS: Faults = DEFAULT_LAB_SETTINGS.faults;

const FAULT_KINDS = [
  'none',
  'stall',
  'lateCharge',
  'timeoutAfterCharge',
  'crashBeforeCharge',
  'crashAfterCharge',
  'crashTaker',
] as const;
type FaultKind = (typeof FAULT_KINDS)[number];

/** How often each fault is drawn. The crashes are few: each one costs a restart of the app. */
const FAULT_WEIGHTS: Record<FaultKind, number> = {
  none: 0.26,
  stall: 0.2,
  lateCharge: 0.2,
  timeoutAfterCharge: 0.23,
  crashBeforeCharge: 0.03,
  crashAfterCharge: 0.04,
  crashTaker: 0.04,
};

/**
 * The configurations of the defences an order runs under, and how often each is drawn: every one the proof
 * matrix declares safe from a second charge for callers with keys of their own (layer 3, 4 or 5 on).
 */
const CONFIGURATIONS = {
  'all on': { weight: 0.3, layers: ALL_LAYERS_ON },
  'all on but 5': { weight: 0.2, layers: { ...ALL_LAYERS_ON, bankKey: false } },
  '3 alone': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, stateMachine: true } },
  '4 alone': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, uniqueConstraint: true } },
  '5 alone': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, bankKey: true } },
  '3+4': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, stateMachine: true, uniqueConstraint: true } },
  '2+4': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, requestKey: true, uniqueConstraint: true } },
} satisfies Record<string, { weight: number; layers: Layers }>;
type ConfigurationName = keyof typeof CONFIGURATIONS;
const CONFIGURATION_NAMES = Object.keys(CONFIGURATIONS) as ConfigurationName[];

/** Moments (shares of the launch window) at which the app is killed whatever it is doing. */
const KILLS_AT = [0.25, 0.75];
/**
 * Where no database layer is on, nothing in PostgreSQL says an order was claimed (its fencing token never rises):
 * its fault is taken off this long after its first request was sent, by when that request has read it.
 */
const UNCLAIMED_FAULT_MS = 300;

/** What each fault does, for the report. */
const FAULT_NAMES: Record<FaultKind, string> = {
  none: 'none',
  stall: 'the attempt stalls 1.5-2.5 s, past its lease, between its claim and the bank',
  lateCharge: 'the call times out before the bank charges; the charge lands 0.5-3 s later',
  timeoutAfterCharge: 'the bank charges, then the call times out',
  crashBeforeCharge: 'the app is killed (SIGKILL) holding its claims, before the charge',
  crashAfterCharge: 'the app is killed (SIGKILL) after the charge, before recording it',
  crashTaker: 'the app is killed holding its claims before the charge, and again when its first taker is about to pay',
};

type PlannedOrder = { orderNo: string; fault: FaultKind; faults: Partial<Faults>; configuration: ConfigurationName };

/** One request of a caller: when (ms since the storm began), and what came back. */
type Attempt = { at: number; ms: number; status?: number; error?: 'timeout' | 'dropped'; detail?: string };

type Caller = {
  orderNo: string;
  clientId: string;
  key: string;
  startedAt: number;
  attempts: Attempt[];
  /** The final answer (201/200/402), or another 4xx, which no retry can fix. */
  final?: { status: number; chargeId?: string; orderNo?: string; paymentStatus?: string; at: number };
  gaveUp?: boolean;
};

type StormEvent = { at: number; what: string };

/** What the storm's parts share: the app's address, the clock, the events, and the 503s seen so far. */
type Storm = {
  base: string;
  clock: () => number;
  events: StormEvent[];
  log: (line: string) => void;
  unavailable: number;
};

type Outage = { downMs: number; answered503: number };

export type InvariantCheck = { name: string; failing: string[] };

export type OrderHistory = {
  orderNo: string;
  fault: string;
  faultClearedAt?: number;
  order: unknown;
  dedupRow: unknown;
  charges: unknown[];
  outboxEvents: number;
  callers: Array<{ clientId: string; key: string; attempts: string[] }>;
};

export type ChaosResults = {
  seed: number;
  /** Per configuration of the defences: orders, charges, orders charged more than once. */
  configurations: Record<string, { orders: number; charges: number; doubleCharges: number }>;
  /** Kills of the app at random moments (beside the crash faults'). */
  randomKills: number;
  orders: number;
  callersPerOrder: number;
  leaseMs: number;
  launchSeconds: number;
  /** Per fault: orders given it, orders claimed with it on, orders whose claim was taken over (fence > 1). */
  faults: Record<FaultKind, { planned: number; injected: number; takenOver: number }>;
  appCrashes: number;
  appRestartSeconds: number[];
  redisRestarts: number;
  redisDownSeconds: number;
  /** Payments answered 503 while the server was down. */
  redisAnswered503: number;
  postgresRestarts: number;
  postgresDownSeconds: number;
  postgresAnswered503: number;
  requests: number;
  answers: Record<string, number>;
  callers: number;
  callersAnswered: number;
  callersGaveUp: number;
  callersRefused: number;
  secondsToAnswer: { p50: number; p99: number; max: number };
  stormSeconds: number;
  settledAfterSeconds: number | null;
  doubleCharges: number;
  statuses: Record<string, number>;
  checks: InvariantCheck[];
  failures: OrderHistory[];
};

/** A small seeded generator (mulberry32): the same seed draws the same faults. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (random: () => number, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

function pickFault(random: () => number): FaultKind {
  let draw = random();
  for (const kind of FAULT_KINDS) {
    draw -= FAULT_WEIGHTS[kind];
    if (draw < 0) return kind;
  }
  return 'none';
}

function faultsFor(kind: FaultKind, random: () => number): Partial<Faults> {
  switch (kind) {
    case 'none':
      return {};
    case 'stall':
      return { stallBeforeBankMs: between(random, 1_500, 2_500) };
    case 'lateCharge':
      return { bankLateChargeMs: between(random, 500, 3_000) };
    case 'timeoutAfterCharge':
      return { bankTimeoutAfterCharge: true };
    case 'crashBeforeCharge':
    case 'crashTaker':
      return { crashBeforeCharge: true };
    case 'crashAfterCharge':
      return { crashAfterCharge: true };
  }
}

function pickConfiguration(random: () => number): ConfigurationName {
  let draw = random();
  for (const name of CONFIGURATION_NAMES) {
    draw -= CONFIGURATIONS[name].weight;
    if (draw < 0) return name;
  }
  return 'all on';
}

function planOrders(random: () => number, count: number): PlannedOrder[] {
  return Array.from({ length: count }, () => {
    const fault = pickFault(random);
    const faults = faultsFor(fault, random);
    return { orderNo: newOrderNo(), fault, faults, configuration: pickConfiguration(random) };
  });
}

/**
 * The order's own settings, every layer and every fault given: the global settings live in Redis, which the
 * storm restarts empty, so nothing is left to inherit. Checked with the app's own schema, because the app
 * ignores an order's settings that do not parse (and would run the order with the global ones, silently).
 */
function labOf(order: PlannedOrder): LabSettingsPatch {
  return LabSettingsPatchSchema.parse({
    layers: CONFIGURATIONS[order.configuration].layers,
    faults: { ...NO_FAULTS, ...order.faults },
    claims: { leaseMs: LEASE_MS },
  });
}

async function insertOrders(db: pg.Pool, orders: PlannedOrder[]): Promise<void> {
  await db.query(
    `INSERT INTO orders (order_no, amount_cents, status, lab, updated_at)
     SELECT unnest($1::text[]), $3::int, 'PENDING', unnest($2::text[])::jsonb, now()`,
    [orders.map((o) => o.orderNo), orders.map((o) => JSON.stringify(labOf(o))), AMOUNT_CENTS],
  );
}

/**
 * Takes the fault off every order that has been claimed (its first attempt read the fault already), or, for a
 * crash-taker order, taken over (its first taker read it too); returns the orders it cleared. Runs every 150 ms
 * during the storm, and after each crash before the app restarts.
 */
async function clearClaimedFaults(db: pg.Pool, orderNos: string[], takers: string[]): Promise<string[]> {
  if (orderNos.length === 0) return [];
  const { rows } = await db.query<{ order_no: string }>(
    `UPDATE orders SET lab = jsonb_set(lab, '{faults}', $2::jsonb)
     WHERE order_no = ANY($1::text[]) AND fence > CASE WHEN order_no = ANY($3::text[]) THEN 1 ELSE 0 END
       AND lab -> 'faults' IS DISTINCT FROM $2::jsonb
     RETURNING order_no`,
    [orderNos, JSON.stringify(NO_FAULTS), takers],
  );
  return rows.map((row) => row.order_no);
}

/** The storm's clock: ms since it began. */
function startClock(): () => number {
  const started = performance.now();
  return () => Math.round(performance.now() - started);
}

/** The faults still on the orders, and when each was taken off (its first claim). */
function faultTracker(db: pg.Pool, plan: PlannedOrder[], clock: () => number) {
  const pending = new Set(plan.filter((o) => o.fault !== 'none').map((o) => o.orderNo));
  const takers = plan.filter((o) => o.fault === 'crashTaker').map((o) => o.orderNo);
  const clearedAt = new Map<string, number>();
  let running = true;
  const clearOnce = async () => {
    for (const orderNo of await clearClaimedFaults(db, [...pending], takers)) {
      pending.delete(orderNo);
      clearedAt.set(orderNo, clock());
    }
  };
  const loop = (async () => {
    while (running) {
      await clearOnce().catch(() => {}); // PostgreSQL may be down: the next round clears it
      await sleep(150);
    }
  })();
  return {
    clearedAt,
    /**
     * After a crash, before the restart. While PostgreSQL is down it is retried for 2 s only, then the app
     * restarts anyway (the loop above clears the fault once the server is back): an app held down until then
     * would hide the database outage from the payments it is meant to meet.
     */
    /** An order no database layer claims: its fault comes off once its first request has read it. */
    clearSoon: (orderNo: string) => {
      setTimeout(() => {
        void db
          .query(`UPDATE orders SET lab = jsonb_set(lab, '{faults}', $2::jsonb) WHERE order_no = $1`, [
            orderNo,
            JSON.stringify(NO_FAULTS),
          ])
          .then(
            () => {
              if (pending.delete(orderNo)) clearedAt.set(orderNo, clock());
            },
            () => {},
          );
      }, UNCLAIMED_FAULT_MS);
    },
    clearNow: async () => {
      for (let tries = 0; tries < 8; tries++) {
        try {
          return await clearOnce();
        } catch {
          await sleep(250);
        }
      }
    },
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/**
 * The app, kept running: a SIGKILL from a crash fault is followed by the fault's removal, then a restart
 * on the same port under the same INSTANCE_NAME, as the demo's supervisor (supervisor.ts) does. Its output
 * goes to a log file (evidence for a failure), not to the console.
 */
function keepAppRunning(options: {
  port: number;
  env: NodeJS.ProcessEnv;
  logFile: string;
  clock: () => number;
  events: StormEvent[];
  beforeRestart: () => Promise<void>;
}) {
  const logStream = createWriteStream(options.logFile, { flags: 'a' });
  const restartMs: number[] = [];
  let child: ChildProcess;
  let stopping = false;
  let reviving: Promise<void> = Promise.resolve();
  const run = () => {
    const life = startApp({ port: options.port, env: { ...options.env, INSTANCE_NAME }, capture: true });
    child = life;
    child.stdout?.pipe(logStream, { end: false });
    child.stderr?.pipe(logStream, { end: false });
    child.once('exit', (code, signal) => {
      if (stopping) return;
      reviving = revive(signal ?? `exit ${code}`).catch((error: Error) => {
        options.events.push({ at: options.clock(), what: `app restart failed: ${error.message}` });
      });
    });
    return life;
  };
  const revive = async (how: string) => {
    const diedAt = performance.now();
    options.events.push({ at: options.clock(), what: `app died (${how})` });
    logStream.write(`\n---- [chaos storm] app died (${how}) at +${options.clock()} ms; restarting ----\n`);
    await options.beforeRestart();
    if (stopping) return;
    const life = run();
    // Killed again before it answered: the next revive counts that restart.
    if (
      await waitForApp(options.port, 60_000, life).then(
        () => true,
        () => false,
      )
    ) {
      restartMs.push(performance.now() - diedAt);
      options.events.push({ at: options.clock(), what: 'app answers again' });
    }
  };
  run();
  return {
    restartMs,
    ready: () => waitForApp(options.port, 60_000, child),
    /** SIGKILLs the app whatever it is doing (if it is running: a crash fault may just have killed it). */
    kill: () => {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      options.events.push({ at: options.clock(), what: 'app killed at a random moment' });
      child.kill('SIGKILL');
      return true;
    },
    /** Waits for a restart under way, so that the settling phase has an app (its reconciler) to wait for. */
    revived: async () => {
      for (let previous: Promise<void> | undefined; previous !== reviving; ) {
        previous = reviving;
        await previous;
      }
    },
    stop: async () => {
      stopping = true;
      await reviving.catch(() => {});
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(forced);
      }
      logStream.end();
    },
  };
}

/** Resolves once the app answers health 200 (every service up), or after `timeoutMs`. */
async function untilHealthy(base: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const status = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(2_000) }).then(
      async (response) => {
        await response.body?.cancel();
        return response.status;
      },
      () => 0,
    );
    if (status === 200) return;
    await sleep(100);
  }
}

/**
 * Stops a server and starts it again on the same port and data. The outage must meet payments, not an app
 * that a crash fault has just killed: it begins once the app answers, and lasts until a payment has been
 * answered 503 (at least OUTAGE_MS, at most OUTAGE_MAX_MS).
 */
async function restartServer(name: string, server: Restartable, storm: Storm): Promise<Outage> {
  await untilHealthy(storm.base, 10_000);
  const before = storm.unavailable;
  const stoppedAt = performance.now();
  storm.events.push({ at: storm.clock(), what: `${name} stopping` });
  await server.stop();
  await sleep(OUTAGE_MS);
  while (storm.unavailable === before && performance.now() - stoppedAt < OUTAGE_MAX_MS) await sleep(50);
  const answered503 = storm.unavailable - before;
  await server.start();
  const downMs = performance.now() - stoppedAt;
  storm.events.push({ at: storm.clock(), what: `${name} started again (${answered503} payment(s) answered 503)` });
  storm.log(`chaos: ${name} down ${(downMs / 1000).toFixed(1)} s, ${answered503} payment(s) answered 503 meanwhile`);
  return { downMs, answered503 };
}

function classify(error: unknown): { error: 'timeout' | 'dropped'; detail: string } {
  const err = error as Error & { cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return { error: 'timeout', detail: err.message };
  return { error: 'dropped', detail: err.cause?.code ?? err.cause?.message ?? err.message };
}

/**
 * A well-behaved client: one key for the whole payment; on 409 and 503 (and any other 5xx) it waits as
 * Retry-After says, on a dropped or refused connection or its own timeout it backs off (RECONNECT_MS), then
 * sends the same request again. The jitter (Math.random: timing only, not the plan) keeps the callers from
 * retrying in lockstep.
 */
async function payUntilAnswered(caller: Caller, storm: Storm): Promise<void> {
  const { base, clock } = storm;
  const deadline = caller.startedAt + CALLER_DEADLINE_MS;
  let reconnectMs = RECONNECT_MS.first;
  const body = JSON.stringify({ orderNo: caller.orderNo, amountCents: AMOUNT_CENTS });
  for (;;) {
    const at = clock();
    if (at > deadline) {
      caller.gaveUp = true;
      return;
    }
    const started = performance.now();
    let waitMs: number;
    try {
      const response = await fetch(`${base}/api/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': caller.key, 'x-client-id': caller.clientId },
        body,
        signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
      });
      const text = await response.text();
      const { status } = response;
      const answer = parseJson(text);
      caller.attempts.push({
        at,
        ms: Math.round(performance.now() - started),
        status,
        detail: [response.headers.get('x-answered-by'), answer.chargeId ?? answer.title].filter(Boolean).join(' '),
      });
      if (status === 200 || status === 201 || status === 402 || (status >= 400 && status < 500 && status !== 409)) {
        caller.final = {
          status,
          chargeId: answer.chargeId,
          orderNo: answer.orderNo,
          paymentStatus: answer.status,
          at: clock(),
        };
        return;
      }
      // 409 "in progress" and 503 "a service is down" say when to come back; any other 5xx is retried too.
      if (status === 503) storm.unavailable++;
      waitMs = 1_000 * Number(response.headers.get('retry-after') ?? 1);
      reconnectMs = RECONNECT_MS.first;
    } catch (error) {
      caller.attempts.push({ at, ms: Math.round(performance.now() - started), ...classify(error) });
      waitMs = reconnectMs;
      reconnectMs = Math.min(2 * reconnectMs, RECONNECT_MS.max);
    }
    await sleep(waitMs * (0.8 + 0.4 * Math.random()));
  }
}

function parseJson(text: string): { chargeId?: string; orderNo?: string; status?: string; title?: string } {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const str = (key: string) => (typeof value[key] === 'string' ? (value[key] as string) : undefined);
    return { chargeId: str('chargeId'), orderNo: str('orderNo'), status: str('status'), title: str('title') };
  } catch {
    return {};
  }
}

/** Starts the callers of every order, the orders spread evenly over the launch window. */
function launchCallers(plan: PlannedOrder[], storm: Storm, random: () => number, sent: (order: PlannedOrder) => void) {
  const callers: Caller[] = [];
  const running = plan.map(async (order, i) => {
    await sleep((i * LAUNCH_MS) / plan.length);
    sent(order);
    await Promise.all(
      CALLERS.map(async (clientId) => {
        await sleep(between(random, 0, 100)); // "at once", as two clicks or two services are
        const caller: Caller = {
          orderNo: order.orderNo,
          clientId,
          key: `${clientId}-${order.orderNo}`,
          startedAt: storm.clock(),
          attempts: [],
        };
        callers.push(caller);
        await payUntilAnswered(caller, storm);
      }),
    );
  });
  return { callers, done: Promise.all(running) };
}

/** Until no order of the storm holds a claim, no dedup row lacks an outcome and no charge is still to land. */
async function waitUntilSettled(db: pg.Pool, orderNos: string[]): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < SETTLE_TIMEOUT_MS) {
    const open = await db
      .query<{ n: number }>(
        `SELECT (SELECT count(*) FROM orders WHERE order_no = ANY($1) AND status IN ('PROCESSING', 'UNKNOWN'))
              + (SELECT count(*) FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = ANY($1) AND outcome IS NULL)
              + (SELECT count(*) FROM bank_charges WHERE merchant_ref = ANY($1) AND created_at > now()) AS n`,
        [orderNos],
      )
      .then(
        (result) => Number(result.rows[0]?.n),
        () => Number.NaN,
      );
    if (open === 0) return performance.now() - started;
    await sleep(250);
  }
  return null;
}

/** The invariants, each as the orders that break it. */
async function checkInvariants(db: pg.Pool, orderNos: string[], callers: Caller[], settled: boolean) {
  const failing = async (sql: string, params: unknown[] = [orderNos]) =>
    (await db.query<{ order_no: string }>(sql, params)).rows.map((row) => row.order_no);
  const charged = 'EXISTS (SELECT 1 FROM bank_charges c WHERE c.merchant_ref = o.order_no)';
  const checks: InvariantCheck[] = [
    {
      name: 'at most one charge per order (bank_charges, merchant_ref = order_no)',
      failing: await failing(
        `SELECT merchant_ref AS order_no FROM bank_charges WHERE merchant_ref = ANY($1) GROUP BY 1 HAVING count(*) > 1`,
      ),
    },
    {
      name: 'every order with a charge is PAID, its charge_id one of its charges',
      failing: await failing(
        `SELECT order_no FROM orders o WHERE order_no = ANY($1) AND ${charged} AND (status <> 'PAID'
           OR NOT EXISTS (SELECT 1 FROM bank_charges c WHERE c.merchant_ref = o.order_no AND c.id = o.charge_id))`,
      ),
    },
    {
      name: 'every order without a charge is PENDING or DECLINED',
      failing: await failing(
        `SELECT order_no FROM orders o WHERE order_no = ANY($1) AND NOT ${charged} AND status NOT IN ('PENDING', 'DECLINED')`,
      ),
    },
    {
      name: 'every 201/200 answer names a charge of its order that exists',
      failing: await answersWithoutCharge(db, callers),
    },
    {
      // A fault the app could not name (README: "never a 500"): an outage is a 503 naming the service.
      name: 'no answer was a 5xx other than 503',
      failing: [
        ...new Set(
          callers
            .filter((caller) =>
              caller.attempts.some((t) => t.status !== undefined && t.status >= 500 && t.status !== 503),
            )
            .map((caller) => caller.orderNo),
        ),
      ],
    },
    {
      // The receipt's event: written with the move to PAID, one per charge (lib/events/outbox.ts).
      name: 'one payment.paid outbox event per PAID order, for its charge; none for the others',
      failing: await failing(
        `SELECT o.order_no FROM orders o LEFT JOIN outbox x ON x.key = o.order_no AND x.topic = 'payment.paid'
         WHERE o.order_no = ANY($1) GROUP BY o.order_no, o.status, o.charge_id
         HAVING count(x.id) <> CASE WHEN o.status = 'PAID' THEN 1 ELSE 0 END
           OR count(x.id) FILTER (WHERE x.payload ->> 'chargeId' IS DISTINCT FROM o.charge_id) > 0`,
      ),
    },
    {
      // Every event relayed to the stream and delivered once to the send-receipt consumer (lib/events/).
      name: 'one receipt per charge: each PAID order has exactly one, for its charge; no other order has any',
      failing: await failing(
        `SELECT o.order_no FROM orders o LEFT JOIN receipts r ON r.order_no = o.order_no
         WHERE o.order_no = ANY($1) GROUP BY o.order_no, o.status, o.charge_id
         HAVING count(r.id) <> CASE WHEN o.status = 'PAID' THEN 1 ELSE 0 END
           OR count(r.id) FILTER (WHERE r.charge_id IS DISTINCT FROM o.charge_id) > 0`,
      ),
    },
    {
      name: "every PAID order's dedup row records its charge, where layer 4 is on",
      failing: await failing(
        `SELECT o.order_no FROM orders o LEFT JOIN idempotent_record r ON r.biz_type = 'PAYMENT' AND r.biz_no = o.order_no
         WHERE o.order_no = ANY($1) AND o.status = 'PAID' AND (o.lab -> 'layers' ->> 'uniqueConstraint') = 'true'
           AND (r.outcome ->> 'chargeId') IS DISTINCT FROM o.charge_id`,
      ),
    },
    {
      name: `every order settled within ${SETTLE_TIMEOUT_MS / 1000} s (no claim, no dedup row without an outcome, no charge still to land)`,
      failing: settled
        ? []
        : await failing(
            `SELECT order_no FROM orders o WHERE order_no = ANY($1) AND (status IN ('PROCESSING', 'UNKNOWN')
               OR EXISTS (SELECT 1 FROM idempotent_record r WHERE r.biz_type = 'PAYMENT' AND r.biz_no = o.order_no AND r.outcome IS NULL)
               OR EXISTS (SELECT 1 FROM bank_charges c WHERE c.merchant_ref = o.order_no AND c.created_at > now()))`,
          ),
    },
  ];
  return checks;
}

/**
 * Relays every payment.paid event of the storm's orders to the stream and runs the send-receipt consumer until
 * each is delivered: the app's own code (lib/events/), in this process, on the storm's PostgreSQL and Redis.
 */
async function deliverReceipts(databaseUrl: string, redisUrl: string, orderNos: string[]): Promise<void> {
  process.env.DATABASE_URL = databaseUrl;
  process.env.REDIS_URL = redisUrl;
  const { relayOutbox } = await import('../../lib/events/relay.ts');
  const { consumeReceipts, ensureReceiptsGroup } = await import('../../lib/events/receipts.ts');
  const { getDb } = await import('../../lib/db.ts');
  await ensureReceiptsGroup();
  while ((await relayOutbox(200)) > 0);
  const deadline = performance.now() + 60_000;
  const undelivered = async () =>
    Number(
      (
        await getDb().$queryRaw<Array<{ n: number }>>`
          SELECT count(*)::int AS n FROM outbox x WHERE x.topic = 'payment.paid' AND x.key = ANY(${orderNos}::text[])
            AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.order_no = x.key)`
      )[0]?.n ?? 0,
    );
  while ((await undelivered()) > 0 && performance.now() < deadline)
    await consumeReceipts('chaos-receipts', { blockMs: 200 });
  await getDb().$disconnect();
  (await import('../../lib/redis.ts')).closeRedis();
}

/** Orders where a client was told 201/200 with a charge that is not on the order's statement. */
async function answersWithoutCharge(db: pg.Pool, callers: Caller[]): Promise<string[]> {
  const paid = callers.filter((c) => c.final && (c.final.status === 200 || c.final.status === 201));
  const ids = paid.map((c) => c.final?.chargeId).filter((id): id is string => id !== undefined);
  const { rows } = await db.query<{ id: string; merchant_ref: string }>(
    'SELECT id, merchant_ref FROM bank_charges WHERE id = ANY($1)',
    [ids],
  );
  const owner = new Map(rows.map((row) => [row.id, row.merchant_ref]));
  const bad = paid.filter(
    (c) =>
      !c.final?.chargeId ||
      owner.get(c.final.chargeId) !== c.orderNo ||
      c.final.orderNo !== c.orderNo ||
      c.final.paymentStatus !== 'PAID',
  );
  return [...new Set(bad.map((c) => c.orderNo))];
}

/** Everything known about an order: its planned fault, its rows, the bank's ledger and every caller's requests. */
async function historyOf(
  db: pg.Pool,
  order: PlannedOrder,
  callers: Caller[],
  clearedAt: Map<string, number>,
): Promise<OrderHistory> {
  const one = async (sql: string) => (await db.query(sql, [order.orderNo])).rows;
  const [row] = await one(
    `SELECT status, fence, attempt_id, claimed_at, unknown_since, charge_id, paid_at, updated_at FROM orders WHERE order_no = $1`,
  );
  const [dedupRow] = await one(
    `SELECT owner, fence, claimed_at, unknown_since, outcome FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = $1`,
  );
  const charges = await one(
    `SELECT id, created_at, idempotency_key, fence_lock FROM bank_charges WHERE merchant_ref = $1 ORDER BY created_at`,
  );
  const [outbox] = await one(`SELECT count(*)::int AS n FROM outbox WHERE key = $1 AND topic = 'payment.paid'`);
  const fmt = (a: Attempt) =>
    `+${(a.at / 1000).toFixed(3)} s (${a.ms} ms): ${a.status ?? a.error}${a.detail ? ` ${a.detail}` : ''}`;
  return {
    orderNo: order.orderNo,
    fault: `${order.fault} ${JSON.stringify(order.faults)}`,
    faultClearedAt: clearedAt.get(order.orderNo),
    order: row,
    dedupRow,
    charges,
    outboxEvents: (outbox as { n: number } | undefined)?.n ?? 0,
    callers: callers
      .filter((c) => c.orderNo === order.orderNo)
      .map((c) => ({ clientId: c.clientId, key: c.key, attempts: c.attempts.map(fmt) })),
  };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function tally(callers: Caller[]): Record<string, number> {
  const answers: Record<string, number> = {};
  for (const attempt of callers.flatMap((c) => c.attempts)) {
    const name = attempt.status === undefined ? (attempt.error ?? 'error') : String(attempt.status);
    answers[name] = (answers[name] ?? 0) + 1;
  }
  return answers;
}

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
  log(`chaos: seed ${seed} (BENCH_CHAOS_SEED=${seed} draws the same faults), ${plan.length} orders`);

  // The storm's own pool: its clients die with each PostgreSQL restart, and the pool must not take the
  // process down with them (an idle client's error is emitted on the pool).
  const db = new pg.Pool({ connectionString: options.databaseUrl, max: 4 });
  db.on('error', () => {});
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
    const { callers, done } = launchCallers(plan, storm, random, (order) => {
      const { layers } = CONFIGURATIONS[order.configuration];
      if (order.fault !== 'none' && !layers.stateMachine && !layers.uniqueConstraint) faults.clearSoon(order.orderNo);
    });
    let randomKills = 0;
    const [redisOutage, postgresOutage] = await Promise.all([
      sleep(REDIS_RESTART_AT * LAUNCH_MS).then(() => restartServer('Redis', redis, storm)),
      sleep(POSTGRES_RESTART_AT * LAUNCH_MS).then(() => restartServer('PostgreSQL', postgres, storm)),
      ...KILLS_AT.map((share) =>
        sleep(share * LAUNCH_MS).then(() => {
          if (app.kill()) randomKills++;
        }),
      ),
      done,
    ]);
    const stormMs = clock() - stormStarted;
    log(`chaos: storm over after ${(stormMs / 1000).toFixed(1)} s; waiting for every order to settle`);

    await app.revived();
    const settledMs = await waitUntilSettled(db, orderNos);
    await faults.stop();
    await deliverReceipts(options.databaseUrl, String(options.appEnv.REDIS_URL ?? ''), orderNos);
    const checks = await checkInvariants(db, orderNos, callers, settledMs !== null);
    const failingOrders = new Set(checks.flatMap((check) => check.failing));
    const failures = await Promise.all(
      plan.filter((o) => failingOrders.has(o.orderNo)).map((o) => historyOf(db, o, callers, faults.clearedAt)),
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
    });
    // The whole record (every request of every caller, the storm's events), to read a failure with.
    writeFileSync(
      path.join(options.logDir, 'chaos-storm.json'),
      `${JSON.stringify({ seed, events, plan, callers, clearedAt: Object.fromEntries(faults.clearedAt) }, null, 2)}\n`,
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

function summarize(run: {
  seed: number;
  plan: PlannedOrder[];
  chargesOf: Map<string, number>;
  randomKills: number;
  callers: Caller[];
  events: StormEvent[];
  clearedAt: Map<string, number>;
  appRestartMs: number[];
  redisOutage: Outage;
  postgresOutage: Outage;
  stormMs: number;
  settledMs: number | null;
  statuses: Record<string, number>;
  takenOver: Set<string>;
  checks: InvariantCheck[];
  failures: OrderHistory[];
}): ChaosResults {
  const faults = Object.fromEntries(
    FAULT_KINDS.map((kind) => [kind, { planned: 0, injected: 0, takenOver: 0 }]),
  ) as ChaosResults['faults'];
  for (const order of run.plan) {
    faults[order.fault].planned++;
    // Injected: the order was claimed with its fault on (the storm took it off after that first claim).
    if (order.fault !== 'none' && run.clearedAt.has(order.orderNo)) faults[order.fault].injected++;
    if (run.takenOver.has(order.orderNo)) faults[order.fault].takenOver++;
  }
  const answered = run.callers.filter((c) => c.final);
  const seconds = answered.map((c) => ((c.final?.at ?? 0) - c.startedAt) / 1000);
  const doubleCharges = run.checks[0]?.failing.length ?? 0;
  const configurations = Object.fromEntries(
    CONFIGURATION_NAMES.map((name) => [name, { orders: 0, charges: 0, doubleCharges: 0 }]),
  ) as ChaosResults['configurations'];
  for (const order of run.plan) {
    const charges = run.chargesOf.get(order.orderNo) ?? 0;
    const row = configurations[order.configuration] ?? { orders: 0, charges: 0, doubleCharges: 0 };
    configurations[order.configuration] = row;
    row.orders++;
    row.charges += charges;
    if (charges > 1) row.doubleCharges++;
  }
  return {
    configurations,
    randomKills: run.randomKills,
    seed: run.seed,
    orders: run.plan.length,
    callersPerOrder: CALLERS.length,
    leaseMs: LEASE_MS,
    launchSeconds: LAUNCH_MS / 1000,
    faults,
    appCrashes: run.events.filter((e) => e.what.startsWith('app died')).length,
    appRestartSeconds: run.appRestartMs.map((ms) => Math.round(ms / 100) / 10),
    redisRestarts: 1,
    redisDownSeconds: Math.round(run.redisOutage.downMs / 100) / 10,
    redisAnswered503: run.redisOutage.answered503,
    postgresRestarts: 1,
    postgresDownSeconds: Math.round(run.postgresOutage.downMs / 100) / 10,
    postgresAnswered503: run.postgresOutage.answered503,
    requests: run.callers.reduce((n, c) => n + c.attempts.length, 0),
    answers: tally(run.callers),
    callers: run.callers.length,
    callersAnswered: answered.filter((c) => [200, 201, 402].includes(c.final?.status ?? 0)).length,
    callersGaveUp: run.callers.filter((c) => c.gaveUp).length,
    callersRefused: answered.filter((c) => ![200, 201, 402].includes(c.final?.status ?? 0)).length,
    secondsToAnswer: {
      p50: Math.round(percentile(seconds, 50) * 10) / 10,
      p99: Math.round(percentile(seconds, 99) * 10) / 10,
      max: Math.round(Math.max(0, ...seconds) * 10) / 10,
    },
    stormSeconds: Math.round(run.stormMs / 100) / 10,
    settledAfterSeconds: run.settledMs === null ? null : Math.round(run.settledMs / 100) / 10,
    doubleCharges,
    statuses: run.statuses,
    checks: run.checks,
    failures: run.failures,
  };
}

/** The failing orders, one block each, for the console (and the bench's non-zero exit). */
export function describeFailures(results: ChaosResults): string {
  const lines = results.checks
    .filter((check) => check.failing.length > 0)
    .map((check) => `FAILED: ${check.name}: ${check.failing.join(', ')}`);
  for (const history of results.failures) {
    lines.push(
      '',
      `${history.orderNo}: fault ${history.fault}${history.faultClearedAt === undefined ? '' : `, taken off at +${(history.faultClearedAt / 1000).toFixed(3)} s`}`,
      `  order: ${JSON.stringify(history.order)}`,
      `  dedup row: ${JSON.stringify(history.dedupRow ?? null)}`,
      `  charges: ${JSON.stringify(history.charges)}`,
      `  payment.paid outbox events: ${history.outboxEvents}`,
      ...history.callers.flatMap((c) => [`  ${c.clientId} (key ${c.key}):`, ...c.attempts.map((a) => `    ${a}`)]),
    );
  }
  return lines.join('\n');
}

/** Section 6 of bench/results.md. */
export function chaosSection(r: ChaosResults, heading = '## 6. Chaos storm'): string {
  const row = (kind: FaultKind) =>
    `| ${FAULT_NAMES[kind]} | ${r.faults[kind].planned} | ${kind === 'none' ? '' : r.faults[kind].injected} | ${r.faults[kind].takenOver} |`;
  const unexpected = Object.entries(r.answers).filter(([name]) => /^5/.test(name) && name !== '503');
  const answers = Object.entries(r.answers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name}: ${n}`)
    .join(', ');
  const statuses = Object.entries(r.statuses)
    .map(([status, n]) => `${status} ${n}`)
    .join(', ');
  const settled =
    r.settledAfterSeconds === null ? `NOT within ${SETTLE_TIMEOUT_MS / 1000} s` : `${r.settledAfterSeconds} s`;
  const restarts = r.appRestartSeconds.length
    ? `down ${r.appRestartSeconds.join(', ')} s from the kill until it answered again`
    : 'none needed';
  const checks = r.checks
    .map(
      (check) =>
        `- ${check.failing.length === 0 ? 'ok' : `**FAILED** for ${check.failing.length} order(s) (${check.failing.slice(0, 5).join(', ')}${check.failing.length > 5 ? ', …' : ''})`}: ${check.name}`,
    )
    .join('\n');
  return `${heading}

${r.orders} orders, each paid by ${r.callersPerOrder} callers at once over HTTP (each with its own X-Client-Id and Idempotency-Key,
retrying with the same key on 409, 503, a dropped connection or its own ${CLIENT_TIMEOUT_MS / 1000} s timeout, until a final answer or
${CALLER_DEADLINE_MS / 1000} s), the orders started evenly over ${r.launchSeconds} s; a lease of ${r.leaseMs} ms; for each order a configuration of the defences
and one fault, drawn at random (seed ${r.seed}; \`BENCH_CHAOS_SEED=${r.seed}\` draws the same). The configurations are those the proof matrix
declares safe from a second charge for callers with keys of their own:

| configuration | orders | charges | orders charged twice |
|---|---:|---:|---:|
${Object.entries(r.configurations)
  .map(([name, c]) => `| ${name} | ${c.orders} | ${c.charges} | ${c.doubleCharges} |`)
  .join('\n')}

The faults, each on the order's first attempt (a crash taker's on its first taker too):

| fault | orders | injected | claim taken over |
|---|---:|---:|---:|
${FAULT_KINDS.map(row).join('\n')}
| Redis stopped and started again (empty: it keeps no data) | | ${r.redisRestarts} (down ${r.redisDownSeconds} s, ${r.redisAnswered503} payments answered 503) | |
| PostgreSQL stopped and started again | | ${r.postgresRestarts} (down ${r.postgresDownSeconds} s, ${r.postgresAnswered503} payments answered 503) | |

"Injected": the order was claimed with its fault on. "Claim taken over": its fencing token rose past the first claim (a
duplicate or the reconciler took a stalled, dead or unknown claim over; an order without a fault may be among them, its
attempt killed by another order's crash, or cut off by an outage). The crash faults killed the app **${r.appCrashes}** time(s) (fewer than the crash
orders when two were claimed in one life: the first to reach its crash point kills the other's attempt with it); each
time it was started again under the same INSTANCE_NAME and settled its previous life's claims at start-up (${restarts}).
Beside them the app was killed **${r.randomKills}** time(s) at a random moment, whatever it was doing (takeovers, the reconciler's sweep,
payments at the bank). Once settled, every payment.paid event was relayed to the Redis stream and delivered to the send-receipt
consumer group.

Payments sent: **${r.requests} HTTP requests** (${answers}; "dropped": a refused or cut connection, "timeout": the client's own).
Callers with a final answer: ${r.callersAnswered} of ${r.callers} (time to it p50 ${r.secondsToAnswer.p50} s, p99 ${r.secondsToAnswer.p99} s, max ${r.secondsToAnswer.max} s);
gave up at the deadline: ${r.callersGaveUp}; refused with another 4xx: ${r.callersRefused}. ${
    unexpected.length === 0
      ? 'No answer was a 5xx other than 503.'
      : `**Unexpected answers: ${unexpected.map(([name, n]) => `${n} × ${name}`).join(', ')}** (a fault the app did not name; its log: .data/bench/chaos-app.log).`
  }
The storm lasted ${r.stormSeconds} s (until the last caller had its answer or gave up); every order was settled **${settled}**
after it ${
    r.settledAfterSeconds === 0
      ? "(already: the callers' retries had settled every order by then)"
      : "(the app's reconciler runs every 5 s; a charge that may still land waits for the bank's 10 s settlement window)"
  }.

**Double charges: ${r.doubleCharges}** (orders with more than one charge; must be 0). Orders: ${statuses}.

Invariants, checked in SQL on the bench database once settled:
${checks}
`;
}
