// The guard alone (section 1's last measure, guard-alone.ts): one process, no HTTP, no Next.js. It pays fresh
// orders through pay() (the pipeline, as POST /api/payments calls it) and through the ideal guard, in alternating
// batches of the same size, 50 at a time, and prints the CPU this process spent a payment on each (its JavaScript,
// its clients of Redis and PostgreSQL, its collector), and the servers' CPU a payment, as one line of JSON. The
// environment says where the servers are and whether the lab is on; with the lab on it registers as Next.js's
// register() does (lib/lab/register.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createOrders } from './drive.ts';

const BATCH = Number(process.env.GUARD_BATCH ?? 1_500);
const PAIRS = Number(process.env.GUARD_PAIRS ?? 9);
const WARMUP_PAIRS = 4;
const CONCURRENCY = 50;
const CALLER = 'c.bench' as const;

const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
const redis = new Redis(process.env.REDIS_URL as string);
const orders = await createOrders(db, redis, BATCH * 2 * (PAIRS + WARMUP_PAIRS), null);
await db.end();
redis.disconnect();

// Imported once the environment is set (env() reads it once).
const { registerLab } = await import('../../../lib/lab/register.ts');
const { pay } = await import('../../../lib/payments/pay.ts');
const { idealPayment } = await import('../../../lib/bench/ideal.ts');
registerLab();

type Route = 'ideal' | 'guarded';
const payOne: Record<Route, (orderNo: string) => Promise<{ kind: string }>> = {
  // The key's name as the ideal's route makes it (app/api/bench/ideal/route.ts), the request as the payments route
  // makes it (app/api/payments/route.ts).
  ideal: (orderNo) => idealPayment(orderNo, 4200, `idem:bench:{${CALLER}:k-${orderNo}}`),
  guarded: (orderNo) =>
    pay({
      orderNo,
      amountCents: 4200,
      caller: CALLER,
      channel: 'api',
      idempotencyKey: `k-${orderNo}`,
      params: { orderNo, amountCents: 4200 },
    }),
};

// A request's context, as Next.js keeps one for every request: every promise then carries it, which costs.
const requestContext = new AsyncLocalStorage<object>();
let next = 0;

/** Linux's clock ticks a second (`getconf CLK_TCK`), the unit of /proc's CPU times. */
const CLOCK_TICKS = 100;

/** The CPU time every process named `name` has used so far (Linux's /proc), in µs. */
function cpuOf(name: string): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).startsWith(name)) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  return (ticks * 1_000_000) / CLOCK_TICKS;
}

type Cost = { app: number; postgres: number; redis: number };

/**
 * One batch: the CPU a payment, in µs, of this process and of the servers (PostgreSQL's processes, Redis's; nothing
 * else uses them meanwhile). Every payment must complete: a fresh order each.
 */
async function batch(route: Route): Promise<Cost> {
  let started = 0;
  const servers = { postgres: cpuOf('postgres'), redis: cpuOf('redis-server') };
  const before = process.cpuUsage();
  await requestContext.run({}, () =>
    Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (started++ < BATCH) {
          const answer = await payOne[route](orders[next++] as string);
          if (answer.kind !== 'completed') throw new Error(`${route}: ${JSON.stringify(answer)}`);
        }
      }),
    ),
  );
  const used = process.cpuUsage(before);
  return {
    app: (used.user + used.system) / BATCH,
    postgres: (cpuOf('postgres') - servers.postgres) / BATCH,
    redis: (cpuOf('redis-server') - servers.redis) / BATCH,
  };
}

// Warm-up (the JIT, the pools, the prepared statements), then the pairs, their order alternating.
for (let i = 0; i < WARMUP_PAIRS; i++) for (const route of ['ideal', 'guarded'] as const) await batch(route);
// GUARD_PROF=<file>: a CPU profile of the measured batches (Chrome DevTools' format), to see where the time goes,
// and beside it (<file>.windows.json) when each batch ran, to tell the two routes' samples apart.
const profiler = process.env.GUARD_PROF ? await startProfile() : undefined;
const pairs: Array<Record<Route, Cost>> = [];
const windows: Array<{ route: Route; start: number; end: number }> = [];
for (let i = 0; i < PAIRS; i++) {
  const order: Route[] = i % 2 === 0 ? ['ideal', 'guarded'] : ['guarded', 'ideal'];
  const pair = {} as Record<Route, Cost>;
  for (const route of order) {
    const start = Number(process.hrtime.bigint() / 1000n);
    pair[route] = await batch(route);
    windows.push({ route, start, end: Number(process.hrtime.bigint() / 1000n) });
  }
  pairs.push(pair);
}
if (profiler) {
  writeFileSync(process.env.GUARD_PROF as string, JSON.stringify(await profiler.stop()));
  writeFileSync(`${process.env.GUARD_PROF}.windows.json`, JSON.stringify(windows));
}
console.log(JSON.stringify({ batch: BATCH, concurrency: CONCURRENCY, pairs }));

async function startProfile() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return { stop: async () => (await session.post('Profiler.stop')).profile };
}
process.exit(0);
