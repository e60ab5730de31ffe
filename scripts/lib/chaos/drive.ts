// The chaos storm's drive: the orders written, the callers that pay them and retry until they hear back, the
// faults taken off once an order is claimed, the app killed and started again, Redis and PostgreSQL stopped
// and started, the wait until every order is settled, the receipts delivered.
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type pg from 'pg';
import { startApp, waitForApp } from '../next-app.ts';
import type { Restartable } from '../services.ts';
import {
  AMOUNT_CENTS,
  between,
  CALLER_DEADLINE_MS,
  CALLERS,
  CLIENT_TIMEOUT_MS,
  INSTANCE_NAME,
  LAUNCH_MS,
  labOf,
  NO_FAULTS,
  OUTAGE_MAX_MS,
  OUTAGE_MS,
  type PlannedOrder,
  RECONNECT_MS,
  REFUND_INTENTS,
  SETTLE_TIMEOUT_MS,
  STORM_DRAIN_MS,
  UNCLAIMED_FAULT_MS,
} from './plan.ts';

/** One request of a caller: when (ms since the storm began), and what came back. */
export type Attempt = { at: number; ms: number; status?: number; error?: 'timeout' | 'dropped'; detail?: string };

/** What a caller is doing while it has no final answer, and since when (ms since the storm began). */
export type Doing = { what: 'sending' | 'reading the answer' | 'waiting'; since: number };

export type Caller = {
  orderNo: string;
  clientId: string;
  key: string;
  startedAt: number;
  attempts: Attempt[];
  /** The final answer (201/200/402), or another 4xx, which no retry can fix. */
  final?: { status: number; chargeId?: string; orderNo?: string; paymentStatus?: string; at: number };
  gaveUp?: boolean;
  doing?: Doing;
};

/** A caller of one refund: its request id, made once for the refund and sent on every retry. */
export type RefundCaller = {
  orderNo: string;
  clientId: string;
  intent: string;
  requestId: string;
  amountCents: number;
  startedAt: number;
  attempts: Attempt[];
  /** Its final answer: a refund (201/200), or a problem (its type; `leftCents` when more than is left). */
  final?: { status: number; at: number } & Pick<Answer, 'refundId' | 'orderNo' | 'type' | 'amountCents' | 'leftCents'>;
  gaveUp?: boolean;
  doing?: Doing;
};

export type StormEvent = { at: number; what: string };

/** What the storm's parts share: the app's address, the clock, the events, and the 503s seen so far. */
export type Storm = {
  base: string;
  clock: () => number;
  events: StormEvent[];
  log: (line: string) => void;
  unavailable: number;
};

export type Outage = { downMs: number; answered503: number };

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function insertOrders(db: pg.Pool, orders: PlannedOrder[]): Promise<void> {
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
export async function clearClaimedFaults(db: pg.Pool, orderNos: string[], takers: string[]): Promise<string[]> {
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
export function startClock(): () => number {
  const started = performance.now();
  return () => Math.round(performance.now() - started);
}

/** The faults still on the orders, and when each was taken off (its first claim). */
export function faultTracker(db: pg.Pool, plan: PlannedOrder[], clock: () => number) {
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
export function keepAppRunning(options: {
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
export async function untilHealthy(base: string, timeoutMs: number): Promise<void> {
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
export async function restartServer(name: string, server: Restartable, storm: Storm): Promise<Outage> {
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

export function classify(error: unknown): { error: 'timeout' | 'dropped'; detail: string } {
  const err = error as Error & { cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return { error: 'timeout', detail: err.message };
  return { error: 'dropped', detail: err.cause?.code ?? err.cause?.message ?? err.message };
}

/** What a caller sends on every try: the same request, with the same key. */
type Exchange = { path: string; body: unknown; key: string; clientId: string };

/**
 * A well-behaved client: one key for the whole intent; on 409 and 503 (and any other 5xx) it waits as
 * Retry-After says, on a dropped or refused connection or its own timeout it backs off (RECONNECT_MS), then
 * sends the same request again, until a final answer (any other status: a 2xx, 402, another 4xx, which no retry
 * can fix), returned with its body; undefined once it gave up at its deadline. The jitter (Math.random: timing
 * only, not the plan) keeps the callers from retrying in lockstep.
 */
async function untilAnswered(
  caller: Pick<Caller, 'startedAt' | 'attempts' | 'gaveUp' | 'doing'>,
  storm: Storm,
  exchange: Exchange,
): Promise<{ status: number; answer: Answer } | undefined> {
  try {
    return await tryUntilAnswered(caller, storm, exchange);
  } finally {
    caller.doing = undefined;
  }
}

async function tryUntilAnswered(
  caller: Pick<Caller, 'startedAt' | 'attempts' | 'gaveUp' | 'doing'>,
  storm: Storm,
  exchange: Exchange,
): Promise<{ status: number; answer: Answer } | undefined> {
  const doing = (what: Doing['what']) => {
    caller.doing = { what, since: storm.clock() };
  };
  const { base, clock } = storm;
  const deadline = caller.startedAt + CALLER_DEADLINE_MS;
  let reconnectMs = RECONNECT_MS.first;
  const body = JSON.stringify(exchange.body);
  for (;;) {
    const at = clock();
    if (at > deadline) {
      caller.gaveUp = true;
      return undefined;
    }
    const started = performance.now();
    let waitMs: number;
    try {
      doing('sending');
      const response = await fetch(`${base}${exchange.path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': exchange.key,
          'x-client-id': exchange.clientId,
        },
        body,
        signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
      });
      const { status } = response;
      doing('reading the answer');
      const answer = parseJson(await response.text());
      const names = answer.chargeId ?? answer.refundId ?? answer.title;
      caller.attempts.push({
        at,
        ms: Math.round(performance.now() - started),
        status,
        detail: [response.headers.get('x-answered-by'), names].filter(Boolean).join(' '),
      });
      if (status !== 409 && status < 500) return { status, answer };
      // 409 "in progress" and 503 "a service is down" say when to come back; any other 5xx is retried too.
      if (status === 503) storm.unavailable++;
      waitMs = 1_000 * Number(response.headers.get('retry-after') ?? 1);
      reconnectMs = RECONNECT_MS.first;
    } catch (error) {
      caller.attempts.push({ at, ms: Math.round(performance.now() - started), ...classify(error) });
      waitMs = reconnectMs;
      reconnectMs = Math.min(2 * reconnectMs, RECONNECT_MS.max);
    }
    doing('waiting');
    await sleep(waitMs * (0.8 + 0.4 * Math.random()));
  }
}

/** A payment's caller, until it is answered for good (or gives up). */
export async function payUntilAnswered(caller: Caller, storm: Storm): Promise<void> {
  const { orderNo, key, clientId } = caller;
  const body = { orderNo, amountCents: AMOUNT_CENTS };
  const answered = await untilAnswered(caller, storm, { path: '/api/payments', body, key, clientId });
  if (!answered) return;
  const { status, answer } = answered;
  caller.final = {
    status,
    chargeId: answer.chargeId,
    orderNo: answer.orderNo,
    paymentStatus: answer.status,
    at: storm.clock(),
  };
}

/** A refund's caller: its request id is its Idempotency-Key, the same on every retry. */
export async function refundUntilAnswered(caller: RefundCaller, storm: Storm): Promise<void> {
  const { orderNo, requestId: key, clientId, amountCents } = caller;
  const answered = await untilAnswered(caller, storm, {
    path: '/api/refunds',
    body: { orderNo, amountCents },
    key,
    clientId,
  });
  if (!answered) return;
  const { status, answer } = answered;
  const { refundId, type, amountCents: refunded, leftCents } = answer;
  caller.final = {
    status,
    refundId,
    orderNo: answer.orderNo,
    type,
    amountCents: refunded,
    leftCents,
    at: storm.clock(),
  };
}

type Answer = {
  chargeId?: string;
  refundId?: string;
  orderNo?: string;
  status?: string;
  title?: string;
  type?: string;
  amountCents?: number;
  leftCents?: number;
};

export function parseJson(text: string): Answer {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const str = (key: string) => (typeof value[key] === 'string' ? (value[key] as string) : undefined);
    const num = (key: string) => (typeof value[key] === 'number' ? (value[key] as number) : undefined);
    return {
      chargeId: str('chargeId'),
      refundId: str('refundId'),
      orderNo: str('orderNo'),
      status: str('status'),
      title: str('title'),
      type: str('type'),
      amountCents: num('amountCents'),
      leftCents: num('leftCents'),
    };
  } catch {
    return {};
  }
}

/** The callers of an order's refunds (REFUND_INTENTS), all at once, each until it is answered for good. */
export async function refundOrder(orderNo: string, storm: Storm, random: () => number, callers: RefundCaller[]) {
  await Promise.all(
    REFUND_INTENTS.flatMap((intent) =>
      intent.callers.map(async (clientId) => {
        await sleep(between(random, 0, 100));
        const caller: RefundCaller = {
          orderNo,
          clientId,
          intent: intent.id,
          requestId: `rq-${intent.id}-${orderNo}`,
          amountCents: intent.amountCents,
          startedAt: storm.clock(),
          attempts: [],
        };
        callers.push(caller);
        await refundUntilAnswered(caller, storm);
      }),
    ),
  );
}

/** Starts the callers of every order, the orders spread evenly over the launch window. */
export function launchCallers(
  plan: PlannedOrder[],
  storm: Storm,
  random: () => number,
  sent: (order: PlannedOrder) => void,
  /** Once the order's callers are answered (or gave up): its refunds, say. */
  then: (order: PlannedOrder, callers: Caller[]) => Promise<void> = async () => {},
) {
  const callers: Caller[] = [];
  const running = plan.map(async (order, i) => {
    await sleep((i * LAUNCH_MS) / plan.length);
    sent(order);
    const own: Caller[] = [];
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
        own.push(caller);
        await payUntilAnswered(caller, storm);
      }),
    );
    await then(order, own);
  });
  return { callers, done: Promise.all(running) };
}

/**
 * Until no order of the storm holds a claim, no dedup row lacks an outcome, no charge is still to land, no refund
 * is under way or in doubt, and every bank refund is recorded by its refund. A refund made under no claim (layer 5
 * alone) whose bank call timed out and landed late is recorded by the reconciler from the bank's report, the
 * settlement window after it landed: the storm's end may come first (seed 721541605).
 */
export async function waitUntilSettled(db: pg.Pool, orderNos: string[]): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < SETTLE_TIMEOUT_MS) {
    const open = await db
      .query<{ n: number }>(
        `SELECT (SELECT count(*) FROM orders WHERE order_no = ANY($1) AND status IN ('PROCESSING', 'UNKNOWN'))
              + (SELECT count(*) FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = ANY($1) AND outcome IS NULL)
              + (SELECT count(*) FROM bank_charges WHERE merchant_ref = ANY($1) AND created_at > now())
              + (SELECT count(*) FROM refunds WHERE order_no = ANY($1) AND status IN ('PROCESSING', 'UNKNOWN'))
              + (SELECT count(*) FROM bank_refunds b WHERE split_part(b.merchant_ref, '/', 1) = ANY($1)
                   AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.bank_refund_id = b.id)) AS n`,
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

/**
 * Relays every payment.paid event of the storm's orders to the stream and runs the send-receipt consumer until
 * each is delivered: the app's own code (lib/events/), in this process, on the storm's PostgreSQL and Redis.
 */
export async function deliverReceipts(databaseUrl: string, redisUrl: string, orderNos: string[]): Promise<void> {
  process.env.DATABASE_URL = databaseUrl;
  process.env.REDIS_URL = redisUrl;
  const { relayOutbox } = await import('../../../lib/events/relay.ts');
  const { consumeReceipts, ensureReceiptsGroup } = await import('../../../lib/events/receipts.ts');
  const { getDb } = await import('../../../lib/db.ts');
  // As the worker does: the lab decides, per order, whether layer 4 guards its receipt.
  (await import('../../../lib/lab/register.ts')).registerLab();
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
  (await import('../../../lib/redis.ts')).closeRedis();
}

/**
 * The callers' end, or an error naming those still going once STORM_DRAIN_MS has passed: each caller gives up at
 * its deadline, so a storm still running then is stuck (a request or a read that never ended), and the run stops
 * saying where rather than wait forever (one storm once hung so, silently, with the app idle).
 */
export async function drained(
  done: Promise<unknown>,
  callers: () => ReadonlyArray<Pick<RefundCaller, 'orderNo' | 'clientId' | 'attempts' | 'final' | 'gaveUp' | 'doing'>>,
  clock: () => number,
  ms = STORM_DRAIN_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const going = callers().filter((caller) => caller.final === undefined && !caller.gaveUp);
      const named = going.slice(0, 10).map((caller) => {
        const doing = caller.doing ? `${caller.doing.what} since ${(caller.doing.since / 1000).toFixed(1)} s` : 'idle';
        return `${caller.clientId} for ${caller.orderNo} (${caller.attempts.length} request(s), ${doing})`;
      });
      reject(
        new Error(
          `chaos: the storm's callers are not done ${ms / 1000} s after they began ` +
            `(at ${(clock() / 1000).toFixed(1)} s): ${going.length} still going: ${named.join('; ')}`,
        ),
      );
    }, ms);
  });
  try {
    await Promise.race([done, stuck]);
  } finally {
    clearTimeout(timer);
  }
}
