// Section 7 of `npm run bench`: what a payment costs when the tables hold a million orders. Two databases on the
// same server, made by SQL (scripts/lib/scale/fill.ts): 10^3 and 10^6 settled orders with everything a paid order
// leaves behind, the larger beside a Redis database holding a day of request-key records at 100 payments a
// second (copies of a real one, with its time to live). An app instance on each, the guarded payment measured on
// both in turns; then each background job run once on each, timed and its rows read counted
// (scripts/lib/scale/reads.ts); and what a payment leaves behind, in bytes.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { ALL_LAYERS_ON, onlyLayers } from '../../../lib/lab/settings.ts';
import { freshDatabase } from '../migrations.ts';
import { startApp, waitForApp } from '../next-app.ts';
import { ROOT } from '../paths.ts';
import { fillSettledOrders, settle, TABLES } from '../scale/fill.ts';
import { JOBS, type JobRun, runJob } from '../scale/reads.ts';
import { createOrders, freshPayments, measureInTurns, postLoad, stopApp } from './drive.ts';
import { type Load, log, PORTS, SECONDS, WARMUP_SECONDS } from './plan.ts';

/** The day's rate the Redis of the large size holds (issue 30's sizing: a shop at 100 payments a second). */
export const KEYS_PER_SECOND = 100;
const DUE = 1_000;
const UNPUBLISHED = 100;

export type ScaleSize = {
  orders: number;
  load: Load;
  jobs: Array<JobRun & { rowsRead: number }>;
};

export type ScaleResults = {
  small: ScaleSize;
  large: ScaleSize;
  fillSeconds: number;
  redis: { keys: number; bytesPerKey: number; recordBytes: number; ttlHours: number; factsBytes: number };
  /** The lab's timeline and the rate limiter's counts: what they keep, bounded by their caps and times to live. */
  lab: LabAndLimitBytes;
  /** PostgreSQL, per order of the large database (every table a paid order writes to, with its indexes). */
  postgres: { bytesPerOrder: number; tables: Array<{ table: string; bytesPerOrder: number }> };
  /** The payments on the large database, alone and while retention prunes its million orders, in turns. */
  retention: { alone: Load; beside: Load; pruned: number; seconds: number };
  /** Dead row versions a duplicate refused by the database leaves, per duplicate (layer 4 alone; layers 3 and 4). */
  deadTuples: Array<{ layers: string; duplicates: number; orders: number; dedupRows: number }>;
};

export async function measureScale(options: {
  serverUrl: string;
  redisUrl: string;
  appEnv: NodeJS.ProcessEnv;
}): Promise<ScaleResults> {
  const largeOrders = Number(process.env.BENCH_SCALE_ORDERS ?? 1_000_000);
  const sizes = [
    { name: 'small', orders: 1_000, port: PORTS.app + 2, redisDb: 3 },
    { name: 'large', orders: largeOrders, port: PORTS.app + 3, redisDb: 4 },
  ] as const;
  const filled = performance.now();
  const prepared: Array<(typeof sizes)[number] & { url: string; db: pg.Pool; redis: Redis; redisUrl: string }> = [];
  const apps: ChildProcess[] = [];
  const admin = new Redis(options.redisUrl);
  const maxmemory = (await admin.config('GET', 'maxmemory')) as string[];
  try {
    for (const size of sizes) {
      const url = await freshDatabase(options.serverUrl, `payonce_scale_${size.name}`);
      // Closed before the jobs run: a connection's reads are counted when it ends, and would land in a job's.
      const filler = new pg.Client({ connectionString: url });
      await filler.connect();
      await fillSettledOrders(filler, { settled: size.orders, due: DUE, unpublished: UNPUBLISHED });
      await settle(filler);
      await filler.end();
      const db = new pg.Pool({ connectionString: url, max: 4 });
      const redisUrl = new URL(options.redisUrl);
      redisUrl.pathname = `/${size.redisDb}`;
      const redis = new Redis(redisUrl.toString());
      await redis.flushdb();
      prepared.push({ ...size, url, db, redis, redisUrl: redisUrl.toString() });
      log(`scale: ${size.orders.toLocaleString('en')} settled orders made by SQL`);
    }
    const fillSeconds = (performance.now() - filled) / 1000;
    const [small, large] = prepared as [(typeof prepared)[0], (typeof prepared)[0]];
    const postgres = await bytesPerOrder(large.url);
    // The jobs, before any app runs: what the counters see is the job's alone.
    const jobsOf = async (size: typeof small) => {
      const runs = [];
      for (const job of JOBS) {
        const run = await runJob(job, {
          ...options.appEnv,
          DATABASE_URL: size.url,
          REDIS_URL: size.redisUrl,
          RETENTION_DAYS: '30',
        });
        const rowsRead = Object.values(run.reads).reduce((sum, table) => sum + table.seqRows + table.indexRows, 0);
        log(`scale: ${job} on ${size.orders.toLocaleString('en')} orders: ${run.ms} ms, ${rowsRead} rows read`);
        runs.push({ ...run, rowsRead });
      }
      return runs;
    };
    const smallJobs = await jobsOf(small);
    const largeJobs = await jobsOf(large);
    apps.push(
      ...prepared.map((size) =>
        startApp({
          port: size.port,
          env: {
            ...options.appEnv,
            DATABASE_URL: size.url,
            REDIS_URL: size.redisUrl,
            BENCH_ROUTES: 'true',
            INSTANCE_NAME: `bench-scale-${size.name}`,
          },
          quiet: true,
        }),
      ),
    );
    for (const [i, size] of prepared.entries()) await waitForApp(size.port, 60_000, apps[i]);
    const perRun = 800 * (SECONDS + 2 * WARMUP_SECONDS);
    const loads = [];
    for (const size of prepared) {
      const next = freshPayments(await createOrders(size.db, size.redis, perRun, null));
      const base = `http://127.0.0.1:${size.port}`;
      loads.push((seconds: number) => postLoad('/api/payments', next, { seconds, base }));
    }
    // A real request-key record, from the large instance's warm-up, copied for a day at 100 payments a second.
    await (loads[1] as (seconds: number) => Promise<Load>)(WARMUP_SECONDS);
    await admin.config('SET', 'maxmemory', '0');
    const lab = await labAndLimitBytes(large.redis);
    const redis = await fillRequestKeys(large.redis, KEYS_PER_SECOND * 86_400);
    const [smallLoad, largeLoad] = (await measureInTurns([
      { label: `POST /api/payments on ${small.orders.toLocaleString('en')} orders`, load: loads[0] as never },
      {
        label: `POST /api/payments on ${large.orders.toLocaleString('en')} orders, a day of keys`,
        load: loads[1] as never,
      },
    ])) as [Load, Load];
    const retention = await retentionUnderLoad(large, options.appEnv);
    const deadTuples = [
      await deadTuplesPerDuplicate(small, 'layer 4 alone', onlyLayers('uniqueConstraint')),
      await deadTuplesPerDuplicate(small, 'layers 3 and 4 (every layer on)', ALL_LAYERS_ON),
    ];
    return {
      retention,
      deadTuples,
      small: { orders: small.orders, load: smallLoad, jobs: smallJobs },
      large: { orders: large.orders, load: largeLoad, jobs: largeJobs },
      fillSeconds,
      redis,
      lab,
      postgres,
    };
  } finally {
    for (const app of apps) await stopApp(app);
    await admin.config('SET', 'maxmemory', maxmemory[1] ?? '256mb');
    for (const size of prepared) {
      await size.redis.flushdb();
      size.redis.disconnect();
      await size.db.end();
    }
    admin.disconnect();
    await dropDatabases(
      options.serverUrl,
      sizes.map((size) => `payonce_scale_${size.name}`),
    );
  }
}

type LabAndLimitBytes = {
  /** The room's stream (capped at `cap` entries): its bytes and the lanes (payments) it holds. */
  room: { bytes: number; entries: number; lanes: number; cap: number };
  /** A viewer's own stream holding one payment's lane (a session that paid once), kept `ttlHours`. */
  viewerStreamBytes: number;
  viewerTtlHours: number;
  /** A rate limiter's count (one per caller and per address, for each of orders and payments), kept a minute. */
  rateLimitKeyBytes: number;
};

/**
 * What the lab's timeline and the rate limiter keep in Redis, measured with Redis's own count (MEMORY USAGE): the
 * room's stream after the warm-up's payments (its lanes counted), a viewer's stream of one lane (a copy of one
 * the app wrote, as a session that paid once leaves it), and a rate limiter's count made by the library the app
 * counts with, as the app names it.
 */
async function labAndLimitBytes(redis: Redis): Promise<LabAndLimitBytes> {
  const room = 'lab:timeline';
  const entries = await redis.xrange(room, '-', '+');
  const lanesOf = (fields: string[]) => {
    const value = fields[fields.indexOf('lanes') + 1];
    return value ? (JSON.parse(value) as unknown[]) : [];
  };
  const lanes = entries.reduce((sum, [, fields]) => sum + lanesOf(fields).length, 0);
  const oneLane = entries.map(([, fields]) => lanesOf(fields)[0]).find((lane) => lane !== undefined);
  const probe = '{lab:timeline}:viewer:scale-probe';
  await redis.xadd(probe, 'MAXLEN', '~', 200, '*', 'lanes', JSON.stringify([oneLane]));
  await redis.pexpire(probe, 6 * 3_600_000);
  const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'rate:payments', points: 120, duration: 60 });
  await limiter.consume('c.scale-probe');
  const [viewerStreamBytes, rateLimitKeyBytes, roomBytes] = await Promise.all([
    redis.memory('USAGE', probe),
    redis.memory('USAGE', 'rate:payments:c.scale-probe'),
    redis.memory('USAGE', room),
  ]);
  await redis.del(probe, 'rate:payments:c.scale-probe');
  const result = {
    room: { bytes: Number(roomBytes ?? 0), entries: entries.length, lanes, cap: 1_000 },
    viewerStreamBytes: Number(viewerStreamBytes ?? 0),
    viewerTtlHours: 6,
    rateLimitKeyBytes: Number(rateLimitKeyBytes ?? 0),
  };
  log(
    `scale: the room's timeline ${result.room.bytes} bytes for ${lanes} lanes in ${entries.length} entries; a viewer's stream of one lane ${result.viewerStreamBytes} bytes; a rate-limit count ${result.rateLimitKeyBytes} bytes`,
  );
  return result;
}

/** The timeline's and the rate limiter's share of the sizing: bounded by caps and times to live, not by the day. */
function labSizing(lab: LabAndLimitBytes | undefined): string {
  if (!lab) return '';
  const n = (value: number) => Math.round(value).toLocaleString('en');
  const perLane = lab.room.lanes > 0 ? lab.room.bytes / lab.room.lanes : 0;
  const lanesPerEntry = lab.room.entries > 0 ? lab.room.lanes / lab.room.entries : 0;
  // At 100 payments a second the timeline's 25 ms batches hold about 2.5 lanes an entry.
  const roomAtCap = lab.room.cap * 2.5 * perLane;
  const viewers = KEYS_PER_SECOND * lab.viewerTtlHours * 3_600;
  const limits = KEYS_PER_SECOND * 60 * 2;
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 0)} MB`;
  return `
Beside them, the lab's timeline (the lab on, as in this run) and the rate limiter's counts, each bounded by a cap or
a time to live, not by the day: the room's stream held ${n(lab.room.bytes)} bytes for ${n(lab.room.lanes)} payments' lanes in ${lab.room.entries} entries
(${n(perLane)} bytes a lane, ${lanesPerEntry.toFixed(1)} lanes an entry at this run's rate), capped at ${n(lab.room.cap)} entries: at 100 payments a
second (2.5 lanes an entry) about ${mb(roomAtCap)}. Each viewer (a session, an API caller) has a stream of its own, at most 200 entries,
kept ${lab.viewerTtlHours} h: ${n(lab.viewerStreamBytes)} bytes for one lane, so a day at 100 payments a second from as many sessions keeps ${n(viewers)}
of them, ${mb(viewers * lab.viewerStreamBytes)} (a workshop's lab, never a shop's: \`LAB_ENABLED=false\` writes none). A rate limiter's count is
${n(lab.rateLimitKeyBytes)} bytes and lives a minute, one per caller and one per address for payments (and for orders): at 100 payments a second
from as many callers, at most ${n(limits)} of them, ${mb(limits * lab.rateLimitKeyBytes)}.`;
}

/**
 * `count` copies of a request-key record the app wrote (its value and its time to live), made by a Lua loop in
 * batches; returns the bytes each takes (Redis's own count of its memory, before and after) and the record's.
 */
async function fillRequestKeys(redis: Redis, count: number): Promise<ScaleResults['redis']> {
  const [, names] = await redis.scan('0', 'MATCH', 'idem:*', 'COUNT', 10_000);
  const name = names[0];
  if (!name) throw new Error('scale: no request-key record to copy');
  const [record, ttlMs, recordBytes] = await Promise.all([
    redis.get(name),
    redis.pttl(name),
    redis.memory('USAGE', name),
  ]);
  const [, facts] = await redis.scan('0', 'MATCH', 'order:facts:*', 'COUNT', 10_000);
  const factsBytes = facts[0] ? Number(await redis.memory('USAGE', facts[0])) : 0;
  const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
  const before = await used();
  const batch = 100_000;
  // A name as long as the app's: `idem:{c.<caller>:<uuid>}`.
  const script = `for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
      redis.call('SET', 'idem:{c.scale-fill:' .. string.format('%036d', i) .. '}', ARGV[3], 'PX', ARGV[4])
    end`;
  for (let from = 0; from < count; from += batch) {
    await redis.eval(script, 0, from, Math.min(from + batch, count) - 1, record ?? '', Math.max(ttlMs, 3_600_000));
  }
  const bytesPerKey = Math.round(((await used()) - before) / count);
  log(`scale: ${count.toLocaleString('en')} request-key records in Redis, ${bytesPerKey} bytes each`);
  return { keys: count, bytesPerKey, recordBytes: Number(recordBytes), ttlHours: ttlMs / 3_600_000, factsBytes };
}

/**
 * Retention on a million due orders while payments run: every settled order of the large database aged past the
 * retention window (and vacuumed, as autovacuum would have), then the guarded payment measured in turns, alone and
 * with retention pruning beside it (its process continued for those turns only, stopped for the others).
 */
async function retentionUnderLoad(
  size: { url: string; db: pg.Pool; redis: Redis; port: number; orders: number },
  appEnv: NodeJS.ProcessEnv,
): Promise<ScaleResults['retention']> {
  for (const statement of [
    `UPDATE orders SET created_at = created_at - interval '40 days', updated_at = updated_at - interval '40 days'
     WHERE status = 'PAID' AND created_at < now() - interval '1 minute'`,
    `UPDATE bank_fences SET updated_at = updated_at - interval '40 days' WHERE updated_at < now() - interval '1 minute'`,
    `UPDATE outbox SET created_at = created_at - interval '40 days'
     WHERE published_at IS NOT NULL AND created_at < now() - interval '1 minute'`,
  ]) {
    await size.db.query(statement);
  }
  await size.db.query('VACUUM ANALYZE orders, bank_fences, outbox');
  const count = async () =>
    (await size.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]?.n ?? 0;
  const before = await count();
  const next = freshPayments(await createOrders(size.db, size.redis, 800 * (SECONDS + 2 * WARMUP_SECONDS), null));
  const base = `http://127.0.0.1:${size.port}`;
  const pay = (seconds: number) => postLoad('/api/payments', next, { seconds, base });
  const job = spawn(
    process.execPath,
    ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'scripts/lib/scale/job.ts'), 'retention'],
    { cwd: ROOT, env: { ...appEnv, DATABASE_URL: size.url, RETENTION_DAYS: '30' }, stdio: 'ignore' },
  );
  job.kill('SIGSTOP');
  let seconds = 0;
  try {
    const [alone, beside] = (await measureInTurns([
      { label: `POST /api/payments on ${size.orders.toLocaleString('en')} orders, no retention running`, load: pay },
      {
        label: `POST /api/payments on ${size.orders.toLocaleString('en')} orders, retention pruning beside them`,
        load: async (turn: number) => {
          job.kill('SIGCONT');
          const started = performance.now();
          try {
            return await pay(turn);
          } finally {
            job.kill('SIGSTOP');
            seconds += (performance.now() - started) / 1000;
          }
        },
      },
    ])) as [Load, Load];
    // The orders made for the load are young: what went is retention's.
    const pruned = before - ((await count()) - 800 * (SECONDS + 2 * WARMUP_SECONDS));
    log(`scale: retention pruned ${pruned.toLocaleString('en')} orders in ${seconds.toFixed(1)} s beside the payments`);
    return { alone, beside, pruned, seconds };
  } finally {
    job.kill('SIGCONT');
    job.kill('SIGKILL');
  }
}

/**
 * Layer 4's refusals leave dead row versions: the refused INSERT's row, and (layer 4 alone) the order's fencing
 * token raised in the same statement, both rolled back. Counted by PostgreSQL (n_dead_tup, autovacuum held off
 * meanwhile): 20 orders under `layers`, each paid once, then 10 duplicates each under keys of their own (so that
 * nothing before the database stops them), through the app.
 */
async function deadTuplesPerDuplicate(
  size: { db: pg.Pool; redis: Redis; port: number },
  layers: string,
  settings: unknown,
): Promise<ScaleResults['deadTuples'][number]> {
  const pay = (order: string, key: string) =>
    fetch(`http://127.0.0.1:${size.port}/api/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-client-id': 'bench' },
      body: JSON.stringify({ orderNo: order, amountCents: 4200 }),
    }).then((response) => response.body?.cancel());
  const orders = await createOrders(size.db, size.redis, 20, { layers: settings });
  const dead = async () => {
    // A backend sends its counts when idle, at most 10 s later: read until they hold still for 11 s.
    let last = '';
    for (let stillSince = Date.now(); Date.now() - stillSince < 11_000; ) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { rows } = await size.db.query<{ relname: string; n: string }>(
        `SELECT relname, n_dead_tup AS n FROM pg_stat_user_tables WHERE relname IN ('orders', 'idempotent_record')`,
      );
      const now = JSON.stringify(rows.map((row) => [row.relname, Number(row.n)]).sort());
      if (now !== last) stillSince = Date.now();
      last = now;
    }
    return Object.fromEntries(JSON.parse(last) as Array<[string, number]>);
  };
  await size.db.query('ALTER TABLE orders SET (autovacuum_enabled = false)');
  await size.db.query('ALTER TABLE idempotent_record SET (autovacuum_enabled = false)');
  try {
    for (const order of orders) await pay(order, `dt-${order}`);
    const before = await dead();
    let duplicates = 0;
    for (const order of orders) {
      for (let i = 0; i < 10; i++, duplicates++) await pay(order, `dt-${order}-${i}`);
    }
    const after = await dead();
    const per = (table: string) => Math.round((((after[table] ?? 0) - (before[table] ?? 0)) / duplicates) * 100) / 100;
    log(
      `scale: ${duplicates} duplicates refused with ${layers}: ${per('idempotent_record')} dead dedup rows, ${per('orders')} dead order rows each`,
    );
    return { layers, duplicates, orders: per('orders'), dedupRows: per('idempotent_record') };
  } finally {
    await size.db.query('ALTER TABLE orders RESET (autovacuum_enabled)');
    await size.db.query('ALTER TABLE idempotent_record RESET (autovacuum_enabled)');
  }
}

/** The tables' size with their indexes, per order; on a connection closed at once (its count reads every order). */
async function bytesPerOrder(url: string): Promise<ScaleResults['postgres']> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ table: string; bytes: string }>(
      `SELECT t AS table, pg_total_relation_size(t::regclass) AS bytes FROM unnest($1::text[]) AS t`,
      [TABLES],
    );
    const { rows: counted } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    const orders = counted[0]?.n ?? 1;
    const tables = rows.map((row) => ({ table: row.table, bytesPerOrder: Math.round(Number(row.bytes) / orders) }));
    return { bytesPerOrder: tables.reduce((sum, table) => sum + table.bytesPerOrder, 0), tables };
  } finally {
    await db.end();
  }
}

async function dropDatabases(serverUrl: string, names: string[]): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

const JOB_WORDS: Record<string, string> = {
  sweep: "the reconciler's round (every 5 s: dead claims, unknown outcomes, the bank's report since the last round)",
  retention: `retention (hourly: the ${DUE.toLocaleString('en')} orders past 30 days, in batches, with every row that hangs on them)`,
  relay: `the outbox relay (the ${UNPUBLISHED} events not yet published)`,
};

const ratioOf = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a');

/** The report's section: the ratio, the jobs at both sizes, the bytes a payment leaves and a day at 100/s. */
export function scaleSection(s: ScaleResults, heading = '## 7. Cost as data grows'): string {
  const n = (value: number) => value.toLocaleString('en');
  const ratio =
    s.small.load.requestsPerSecond > 0 ? s.large.load.requestsPerSecond / s.small.load.requestsPerSecond : 0;
  const day = KEYS_PER_SECOND * 86_400;
  const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
  const jobRows = JOBS.map((job) => {
    const small = s.small.jobs.find((run) => run.job === job);
    const large = s.large.jobs.find((run) => run.job === job);
    return `| ${JOB_WORDS[job]} | ${small?.ms ?? '?'} ms, ${n(small?.rowsRead ?? 0)} rows read | ${large?.ms ?? '?'} ms, ${n(large?.rowsRead ?? 0)} rows read |`;
  }).join('\n');
  const tables = s.postgres.tables
    .filter((table) => table.bytesPerOrder > 0)
    .map((table) => `${table.table} ${n(table.bytesPerOrder)}`)
    .join(', ');
  return `${heading}

Two databases on the same server, made by SQL (\`scripts/lib/scale/fill.ts\`, ${s.fillSeconds.toFixed(0)} s): ${n(s.small.orders)} and
${n(s.large.orders)} settled orders, each with what a paid order leaves behind (its charge, its PAYMENT and RECEIPT dedup rows,
its relayed event, its receipt, its fencing token; a $5 refund in ten, with its request, dedup row and the bank's
refund), their ages spread over 20 days, plus ${n(DUE)} orders past retention and ${UNPUBLISHED} events not yet relayed. The larger
one's instance has beside it a Redis holding a day of request-key records at ${KEYS_PER_SECOND} payments a second (${n(s.redis.keys)},
copies of one the app wrote, with its time to live). An app instance on each, the guarded payment on fresh orders,
in turns (three, as in section 2):

| database | req/s | p50 ms | p99 ms |
|---|---:|---:|---:|
| ${n(s.small.orders)} orders | ${s.small.load.requestsPerSecond} | ${s.small.load.p50} | ${s.small.load.p99} |
| ${n(s.large.orders)} orders, a day of keys in Redis | ${s.large.load.requestsPerSecond} | ${s.large.load.p50} | ${s.large.load.p99} |
| **large / small** | **${ratio.toFixed(2)}** | | |

Target: ≥ 0.9. The payment's statements go by primary and unique keys only, whose B-tree depth grows by one level
between the two sizes.

Each background job, run once as the app runs it, in a process of its own, with the instances stopped: its time, and
the rows it read (PostgreSQL's counters: by sequential scans, and index entries by index scans, over every table):

| job | ${n(s.small.orders)} orders | ${n(s.large.orders)} orders |
|---|---:|---:|
${jobRows}

Each reads what is due or in doubt, not the tables: \`test/scale/background-jobs.int.test.ts\` fails when a job reads
more than 1% of a table of 100,000 orders (it did for the sweep and for retention before their indexes; decision 033).

Retention beside the payments: every settled order of the larger database aged past the 30 days (and vacuumed), then
the guarded payment measured in turns, alone and with retention pruning beside it (its process let run during those
turns only); it pruned ${n(s.retention.pruned)} orders in ${s.retention.seconds.toFixed(0)} s, ${n(Math.round(s.retention.pruned / Math.max(s.retention.seconds, 1)))} a second, with everything that hangs on them:

| payments | req/s | p50 ms | p99 ms |
|---|---:|---:|---:|
| alone | ${s.retention.alone.requestsPerSecond} | ${s.retention.alone.p50} | ${s.retention.alone.p99} |
| with retention pruning beside them | ${s.retention.beside.requestsPerSecond} | ${s.retention.beside.p50} | ${s.retention.beside.p99} |
| **beside / alone** | ${ratioOf(s.retention.beside.requestsPerSecond, s.retention.alone.requestsPerSecond)} | ${ratioOf(s.retention.beside.p50, s.retention.alone.p50)} | **${ratioOf(s.retention.beside.p99, s.retention.alone.p99)}** |

Bound: p99 at most 1.5× (decision 033).

Layer 4's refusals: a duplicate the unique key refuses leaves dead row versions behind until vacuum, counted by
PostgreSQL (\`n_dead_tup\`) over ${s.deadTuples[0]?.duplicates ?? 0} duplicates, each under a key of its own, through the app:
${s.deadTuples.map((row) => `${row.layers}, **${row.dedupRows}** dead dedup row(s) and **${row.orders}** dead order row(s) per duplicate`).join('; ')}.
Layer 4 alone inserts the row and raises the order's fencing token in one statement, both rolled back by the unique
violation: the refused row stays dead until vacuum; the order's dead version is mostly pruned as soon as its page is
read again (the update changes no indexed column), which the next duplicate does. With layer 3 on, the conditional
update refuses the duplicate first and no insert is tried. \`ON CONFLICT DO NOTHING\` would spare the dead row, but
commit the raised token of a refused duplicate (decision 033).

What a payment leaves behind: in PostgreSQL **${n(s.postgres.bytesPerOrder)} bytes** per order, indexes included (${tables}); in Redis
**${n(s.redis.bytesPerKey)} bytes** per request-key record (Redis's own count over the ${n(s.redis.keys)}; the record itself ${s.redis.recordBytes}, kept
${s.redis.ttlHours.toFixed(0)} h) and ${s.redis.factsBytes} bytes of the order's facts (kept 1 h). A day at 100 payments a second (${n(day)}
payments): ${gib(day * s.postgres.bytesPerOrder)} a day in PostgreSQL, kept as long as retention keeps orders (30 days:
${gib(30 * day * s.postgres.bytesPerOrder)}), and ${gib(day * s.redis.bytesPerKey)} of request keys in Redis, which their time to live keeps at a day's worth
(the demo's own Redis is capped at 256 MB, \`noeviction\`: about ${n(Math.floor((256 * 2 ** 20) / Math.max(s.redis.bytesPerKey, 1)))} keys, a shop's must be sized for its day).
${labSizing(s.lab)}
`;
}
