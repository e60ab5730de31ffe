// The benchmark's drive: orders made by SQL, autocannon's load against a route, the app stopped.
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { encodeOrderFacts, ORDER_FACTS_TTL_MS, orderFactsKey } from '../../../lib/payments/order-facts.ts';
import { newOrderNo } from '../../../lib/payments/order-no.ts';
import { BASE, CONNECTIONS, type Load, log, SECONDS, WARMUP_SECONDS } from './plan.ts';

/**
 * Pending orders, inserted in bulk (the benchmark measures payments, not order creation). As the app's own
 * createOrder does, an order's number says whether it has settings of its own (lib/payments/order-no.ts), and one
 * with none gets its facts in Redis (lib/payments/order-facts.ts).
 */
export async function createOrders(db: pg.Pool, redis: Redis, count: number, lab: unknown): Promise<string[]> {
  const numbers = Array.from({ length: count }, () => newOrderNo(lab !== null));
  for (let i = 0; i < numbers.length; i += 5_000) {
    await db.query(
      `INSERT INTO orders (order_no, amount_cents, status, lab, updated_at)
       SELECT unnest($1::text[]), 4200, 'PENDING', $2::jsonb, now()`,
      [numbers.slice(i, i + 5_000), lab === null ? null : JSON.stringify(lab)],
    );
  }
  if (lab === null) {
    const facts = redis.pipeline();
    const encoded = encodeOrderFacts({ amountCents: 4200, owner: null });
    for (const number of numbers) facts.set(orderFactsKey(number), encoded, 'PX', ORDER_FACTS_TTL_MS);
    await facts.exec();
  }
  return numbers;
}

export function run(options: autocannon.Options): Promise<Load> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => {
      if (error) return reject(error);
      resolve({
        requestsPerSecond: Math.round(result.requests.average),
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.timeouts,
        non2xx: result.non2xx,
        total: result.requests.total,
      });
    });
  });
}

/** POSTs to `path`, each request with the next body from `next` (a fresh order, or the storm's list). */
export async function postLoad(
  urlPath: string,
  next: () => { body: unknown; key: string } | undefined,
  options: { seconds?: number; amount?: number; connections?: number; base?: string } = {},
): Promise<Load> {
  return run({
    url: `${options.base ?? BASE}${urlPath}`,
    connections: options.connections ?? CONNECTIONS,
    ...(options.amount ? { amount: options.amount } : { duration: options.seconds ?? SECONDS }),
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const item = next();
          if (!item) return request;
          return {
            ...request,
            headers: { 'content-type': 'application/json', 'idempotency-key': item.key, 'x-client-id': 'bench' },
            body: JSON.stringify(item.body),
          };
        },
      },
    ],
  });
}

/** A fresh pending order per request: the guarded path in full, never a replay. */
export function freshPayments(orders: string[]): () => { body: unknown; key: string } | undefined {
  let index = 0;
  return () => {
    const order = orders[index++ % orders.length] as string;
    return { body: { orderNo: order, amountCents: 4200 }, key: `k-${order}` };
  };
}

/** SIGTERM, then SIGKILL if it has not exited within 10 s; resolves once it has (its port is free again). */
export async function stopApp(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGCONT'); // in case it was stopped for the lab-off measurement
  child.kill('SIGTERM');
  const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(forced);
}

/** One measurement in the log. */
export function say(label: string, result: Load): void {
  log(
    `${label}: ${result.requestsPerSecond} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}, non-2xx ${result.non2xx}`,
  );
}

/**
 * Routes whose ratios matter, measured in turns and each reported by its median turn: what drifts during a run
 * (tables growing, a checkpoint, a neighbour on this shared machine) then falls on all of them instead of on
 * whichever was measured last. The order rotates from turn to turn (A B, B A, A B...; A B C, B C A, C A B...),
 * so that no route always follows the same one. Each result keeps its turns, for pairedRatio().
 */
export async function measureInTurns(
  routes: Array<{ label: string; load: (seconds: number) => Promise<Load> }>,
  seconds = SECONDS,
  turns = 3,
): Promise<Load[]> {
  for (const { load } of routes) await load(WARMUP_SECONDS);
  const measured = routes.map((): Load[] => []);
  for (let turn = 0; turn < turns; turn++) {
    for (let k = 0; k < routes.length; k++) {
      const i = (turn + k) % routes.length;
      measured[i]?.push(await (routes[i] as (typeof routes)[number]).load(seconds / turns));
    }
  }
  return routes.map(({ label }, i) => medianTurn(label, measured[i] ?? []));
}

/** A route's turns, reported by its median turn, with every turn kept (for pairedRatio). */
export function medianTurn(label: string, runs: Load[]): Load {
  const median = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[
    Math.floor(runs.length / 2)
  ] as Load;
  say(`${label} (median of ${runs.length} turns)`, median);
  return { ...median, turns: runs.map((run) => run.requestsPerSecond) };
}

/**
 * `a` against `b`, turn by turn (both from one measureInTurns): the median of the turns' ratios, and the lowest
 * and highest of them. Two neighbouring turns share the machine's speed of the moment, which the two routes'
 * medians, taken apart, do not (the ratio of the medians moved by up to 0.1 from run to run).
 */
export function pairedRatio(a: Load, b: Load): { median: number; low: number; high: number } {
  const ratios = (a.turns ?? [a.requestsPerSecond])
    .map((value, turn) => value / ((b.turns ?? [b.requestsPerSecond])[turn] ?? Number.NaN))
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
  const middle = Math.floor(ratios.length / 2);
  const median =
    ratios.length % 2 === 1
      ? (ratios[middle] as number)
      : ((ratios[middle - 1] as number) + (ratios[middle] as number)) / 2;
  return { median, low: ratios[0] ?? Number.NaN, high: ratios.at(-1) ?? Number.NaN };
}
