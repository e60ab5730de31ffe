// Section 8 of `npm run bench`: what synchronous replication costs a payment. The topology of the database-failover
// scenarios (scripts/lib/patroni.ts: a primary and a streaming replica under Patroni, HAProxy in front), an app
// instance on it, and the guarded payment measured in turns with replication asynchronous and synchronous (Patroni's
// synchronous mode, switched between turns on the running cluster: the same servers, the same tables). What the
// synchronous mode buys is in the scenario matrix: the failover row that keeps every claim.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { applyMigrations } from '../migrations.ts';
import { startApp, waitForApp } from '../next-app.ts';
import { startPatroniTopology } from '../patroni.ts';
import { createOrders, freshPayments, measureInTurns, postLoad, stopApp } from './drive.ts';
import { type Load, log, PORTS, SECONDS, WARMUP_SECONDS } from './plan.ts';

export type ReplicationResults = {
  asynchronous: Load;
  synchronous: Load;
  /** One payment at a time (one connection): each commit's wait is then the payment's, not hidden by the others'. */
  asynchronousAlone: Load;
  synchronousAlone: Load;
  /** Debian's PostgreSQL under Patroni (the embedded server has no pg_basebackup to make a replica with). */
  postgres: string;
};

export async function measureReplication(options: {
  redisUrl: string;
  /** The bank's books, apart from the replicated database as in the scenarios: the bench's own PostgreSQL. */
  bankDatabaseUrl: string;
  appEnv: NodeJS.ProcessEnv;
}): Promise<ReplicationResults> {
  const topology = await startPatroniTopology({
    basePort: 26490,
    // Under the system's temporary folder: PostgreSQL runs as the postgres user, who may not reach the checkout.
    dataDir: path.join(tmpdir(), 'payonce-patroni-bench'),
    synchronous: false,
    log,
  });
  const port = PORTS.app + 4;
  const redisUrl = new URL(options.redisUrl);
  redisUrl.pathname = '/5';
  const redis = new Redis(redisUrl.toString());
  const db = new pg.Pool({ connectionString: topology.url, max: 4 });
  db.on('error', () => {});
  let app: ReturnType<typeof startApp> | undefined;
  try {
    await applyMigrations(topology.url);
    // Redis's memory is capped for the whole server (1 GB for the benchmark, noeviction), and the sections before
    // this one leave their orders' facts, request keys and timeline in database 0 (section 1's four routes on two
    // instances: its payments failed with OOM here on 2026-12-06, under 256 MB). Nothing after reads them: emptied,
    // as this section's own is.
    const earlier = new Redis(options.redisUrl);
    await earlier.flushdb().finally(() => earlier.disconnect());
    await redis.flushdb();
    app = startApp({
      port,
      env: {
        ...options.appEnv,
        DATABASE_URL: topology.url,
        BANK_DATABASE_URL: options.bankDatabaseUrl,
        REDIS_URL: redisUrl.toString(),
        INSTANCE_NAME: 'bench-replicated',
      },
      quiet: true,
    });
    await waitForApp(port, 60_000, app);
    const next = freshPayments(await createOrders(db, redis, 800 * (SECONDS + 2 * WARMUP_SECONDS), null));
    const base = `http://127.0.0.1:${port}`;
    const [version] = (await db.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows;
    // Each turn switches the cluster to its mode first (Patroni applies it within a second or two), then measures.
    const inMode = (synchronous: boolean, connections?: number) => async (seconds: number) => {
      await topology.setSynchronous(synchronous);
      return postLoad('/api/payments', next, { seconds, base, connections });
    };
    const [asynchronous, synchronous, asynchronousAlone, synchronousAlone] = (await measureInTurns([
      { label: 'POST /api/payments, replication asynchronous', load: inMode(false) },
      { label: 'POST /api/payments, replication synchronous', load: inMode(true) },
      { label: 'POST /api/payments one at a time, replication asynchronous', load: inMode(false, 1) },
      { label: 'POST /api/payments one at a time, replication synchronous', load: inMode(true, 1) },
    ])) as [Load, Load, Load, Load];
    return { asynchronous, synchronous, asynchronousAlone, synchronousAlone, postgres: version?.v ?? 'unknown' };
  } finally {
    if (app) await stopApp(app);
    await db.end();
    await redis.flushdb();
    redis.disconnect();
    await topology.stop();
  }
}

export function replicationSection(
  r: ReplicationResults,
  heading = '## 8. Replicated PostgreSQL: what synchronous commit costs',
): string {
  const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
  const row = (load: Load, alone: Load) =>
    [load.requestsPerSecond, load.p50, load.p99, alone.requestsPerSecond, alone.p50, alone.p99].join(' | ');
  return `${heading}

The database-failover scenarios' topology (\`npm run scenarios\`, decision 034): PostgreSQL ${r.postgres} as a
primary and a streaming replica under Patroni, HAProxy in front, all on this machine, the bank's books apart (in the
benchmark's own PostgreSQL, as in the scenarios). The guarded payment (all layers on)
measured in turns with replication asynchronous (PostgreSQL's default: a commit returns once the primary has it on
disk) and synchronous (Patroni's synchronous mode: once the replica has it on disk too), switched on the running
cluster between turns.

| replication | req/s | p50 ms | p99 ms | one at a time: req/s | p50 ms | p99 ms |
|---|---:|---:|---:|---:|---:|---:|
| asynchronous | ${row(r.asynchronous, r.asynchronousAlone)} |
| synchronous | ${row(r.synchronous, r.synchronousAlone)} |
| **synchronous / asynchronous** | **${ratio(r.synchronous.requestsPerSecond, r.asynchronous.requestsPerSecond)}** | ${ratio(r.synchronous.p50, r.asynchronous.p50)} | ${ratio(r.synchronous.p99, r.asynchronous.p99)} | **${ratio(r.synchronousAlone.requestsPerSecond, r.asynchronousAlone.requestsPerSecond)}** | ${ratio(r.synchronousAlone.p50, r.asynchronousAlone.p50)} | ${ratio(r.synchronousAlone.p99, r.asynchronousAlone.p99)} |

Errors and non-2xx answers: asynchronous ${r.asynchronous.errors + r.asynchronous.non2xx}, synchronous ${r.synchronous.errors + r.synchronous.non2xx}. Fifty at a time the app's two cores are
the bottleneck, and a commit's wait for the replica overlaps the other payments' work; one at a time it is the
payment's own. A payment commits twice on the hot
path (its claim and its outcome), and each synchronous commit waits for the replica's flush as well: on loopback that
is a second fsync on the same disk; across machines add a network round trip to each. What it buys: the failover row
that keeps every claim, where the asynchronous one lets layers 3 and 4 alone charge twice.`;
}
