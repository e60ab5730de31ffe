// What `npm run demo` and `npm run demo:cluster` have in common:
//   1. validate the configuration (lib/env.ts)
//   2. start the embedded PostgreSQL and Redis, unless DATABASE_URL / REDIS_URL (or REDIS_SENTINELS) name servers
//   3. apply the committed migrations
//   4. build the app if the sources changed; start the app instance(s) and the workers (receipts, refunds), supervised
//      (the lab's crash faults kill them on purpose: they come back, and reconciliation settles the rest)
//   5. cluster: nginx in front of the instances (scripts/lib/nginx.ts), retrying on timeouts and dead
//      instances as the lab's gateway settings say; its configuration rewritten and reloaded when they change
//   6. on Ctrl-C or SIGTERM: nginx, the apps and the worker, then the services; nothing is left running
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { env } from '../../lib/env.ts';
import { ownAddresses } from '../../lib/http/hosts.ts';
import { isExposed } from '../../lib/http/presenter.ts';
import { GATEWAY_RECORD_KEY, GATEWAY_RECORD_TTL_MS, type GatewayRecord } from '../../lib/lab/gateway.ts';
import { type GatewaySettings, parseStoredLabSettings } from '../../lib/lab/settings.ts';
import { appendToTimeline, viewerOf } from '../../lib/lab/timeline.ts';
import type { TimelineEvent } from '../../lib/lab/timeline-event.ts';
import { connectRedis } from '../../lib/redis.ts';
import { applyMigrations } from './migrations.ts';
import { buildApp, buildIsStale, nextEnv, startApp, waitForApp } from './next-app.ts';
import { nginxAt } from './nginx.ts';
import { gatewayLane } from './nginx-log.ts';
import { signalsHandled } from './own-process-group.ts';
import { ROOT } from './paths.ts';
import { stopLeftover } from './processes.ts';
import { startServices } from './services.ts';
import { loadOrCreateSessionSecret } from './session-secret.ts';
import { type Supervised, supervise } from './supervisor.ts';
import { ensureProgram, NGINX } from './system-programs.ts';

export type Plan = {
  /** The app instances: one for the demo, two behind the gateway for the cluster. */
  apps: Array<{ name: string; port: number }>;
  /** The port the user opens: the single app's, or the gateway's (nginx). */
  gatewayPort?: number;
};

const log = (line: string) => console.log(`[demo] ${line}`);

/**
 * Exposed to a room (HOST is not loopback), the presenter's actions need LAB_SECRET: one is made for this run
 * when none is set, and printed, with where attendees connect.
 */
/** Where attendees connect: this machine's addresses (when listening on all of them), or HOST. */
function addresses(host: string): string {
  const port = env().PORT;
  const all = ownAddresses().filter((address) => !address.startsWith('127.') && address !== '[::1]');
  const names = ['0.0.0.0', '::', '[::]'].includes(host) ? all.filter((address) => !address.startsWith('[')) : [host];
  return names.length > 0
    ? names.map((name) => `http://${name}:${port}/`).join(' or ')
    : `port ${port} of this machine`;
}

function roomSettings(host: string, secret: string | undefined, single: boolean) {
  if (!isExposed(host) || !single) return { env: {}, lines: [] as string[] };
  const labSecret = secret ?? randomBytes(18).toString('base64url');
  return {
    env: { LAB_SECRET: labSecret },
    lines: [
      `exposed on ${host}: attendees open ${addresses(host)} (each gets a lab of their own)`,
      `presenter: /lab/room with the lab secret ${secret ? 'you set (LAB_SECRET)' : labSecret}`,
    ],
  };
}

export async function launch(plan: Plan): Promise<void> {
  const config = env();
  const room = roomSettings(config.HOST, config.LAB_SECRET, plan.gatewayPort === undefined);
  const services = await startServices({
    profile: 'demo',
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    redisUrl: config.REDIS_URL,
    // The apps and the worker find the primary through the Sentinels themselves (they inherit REDIS_SENTINELS).
    redisThroughSentinel: config.REDIS_SENTINELS !== undefined,
    postgresPort: config.EMBEDDED_POSTGRES_PORT,
    redisPort: config.EMBEDDED_REDIS_PORT,
    log,
  });
  log(services.started.length > 0 ? `started ${services.started.join(' and ')}` : 'using the servers you configured');

  const children: Supervised[] = [];
  let gateway: { stop(): Promise<void> } | undefined;
  let stopping = false;
  const shutdown = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log(`${why}: stopping`);
    await gateway?.stop();
    await Promise.all(children.map((child) => child.stop()));
    await services.stop();
    log('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));

  try {
    const applied = await applyMigrations(services.databaseUrl);
    log(applied.length > 0 ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');
    // The bank's own database, when it has one (BANK_DATABASE_URL): the same schema, its tables the ones it uses.
    if (config.BANK_DATABASE_URL) {
      const bank = await applyMigrations(config.BANK_DATABASE_URL);
      log(
        bank.length > 0
          ? `applied migrations to the bank's database: ${bank.join(', ')}`
          : 'the bank’s schema is up to date',
      );
    }
    // Every instance signs sessions with the same key, kept across restarts (SESSION_SECRET, or the data folder's).
    const sessionSecret = config.SESSION_SECRET ?? demoSessionSecret(path.resolve(ROOT, config.DATA_DIR, 'demo'));
    const appEnv = nextEnv({
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
      SESSION_SECRET: sessionSecret,
    });
    if (buildIsStale()) {
      log('building the app (once, about a minute)...');
      buildApp(appEnv);
    }

    const pidDir = path.resolve(ROOT, config.DATA_DIR, 'demo');
    mkdirSync(pidDir, { recursive: true });
    const giveUp = () => void shutdown('crash loop');
    for (const app of plan.apps) {
      const pidFile = path.join(pidDir, `app-${app.name}.pid`);
      // A launcher killed with SIGKILL leaves its apps running on their ports: stop them first.
      await stopLeftover(pidFile, /next/, 'SIGTERM');
      // Behind the gateway, every request's socket is nginx's: the client is the X-Forwarded-For it sets.
      const behindGateway = plan.gatewayPort === undefined ? {} : { TRUSTED_PROXIES: '127.0.0.1' };
      const instanceEnv = { ...appEnv, INSTANCE_NAME: app.name, ...room.env, ...behindGateway };
      // The single app of `npm run demo` listens where HOST says; the cluster's instances stay behind the gateway.
      const host = plan.gatewayPort === undefined ? config.HOST : '127.0.0.1';
      children.push(
        supervise(`app ${app.name}`, () => startApp({ port: app.port, env: instanceEnv, host }), {
          pidFile,
          log,
          onGiveUp: giveUp,
        }),
      );
    }
    // The background workers, each a process of its own (as they would be deployed): the receipts' (the outbox
    // relay and the receipts' consumer, which the lab's fault kills on purpose) and the refunds' (the queue's).
    for (const role of ['receipts', 'refunds'] as const) {
      const workerPid = path.join(pidDir, `worker-${role}.pid`);
      await stopLeftover(workerPid, /scripts\/worker/, 'SIGTERM');
      children.push(
        supervise(`${role === 'receipts' ? 'receipt' : 'refund'} worker`, () => startWorker(appEnv, role), {
          pidFile: workerPid,
          log,
          onGiveUp: giveUp,
        }),
      );
    }
    await Promise.all(plan.apps.map((app, i) => waitForApp(app.port, 60_000, children[i]?.current())));

    if (plan.gatewayPort !== undefined) {
      gateway = await startNginx({
        port: plan.gatewayPort,
        upstreams: plan.apps,
        prefix: path.join(pidDir, 'nginx'),
        redisUrl: services.redisUrl,
        databaseUrl: services.databaseUrl,
        onGiveUp: giveUp,
      });
    }
    // Stopped while starting (Ctrl-C reached every process): shutdown() says so and ends this process.
    if (stopping) return;
    log(`ready: http://localhost:${plan.gatewayPort ?? plan.apps[0]?.port}  (Ctrl-C stops everything)`);
    for (const line of room.lines) log(line);
    // From now on Ctrl-C reaches this process alone, which stops the rest in order. Until now it reached every
    // process (a stop while starting cannot leave behind what is still being started, the build included).
    signalsHandled();
  } catch (error) {
    if (stopping) return; // an app killed by the same Ctrl-C: not an error of the start
    await gateway?.stop();
    await Promise.all(children.map((child) => child.stop()));
    await services.stop();
    throw error;
  }
}

function demoSessionSecret(dataDir: string): string {
  const file = path.join(dataDir, 'session-secret');
  const { secret, created } = loadOrCreateSessionSecret(file);
  if (created) log(`made a session secret: ${path.relative(ROOT, file)} (SESSION_SECRET overrides it)`);
  return secret;
}

function startWorker(workerEnv: NodeJS.ProcessEnv, role: 'receipts' | 'refunds') {
  return spawn(
    process.execPath,
    ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'scripts/worker.ts'), role],
    {
      cwd: ROOT,
      env: workerEnv,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
}

/**
 * The cluster's gateway: nginx, supervised, on its own prefix. Its timeout and retries are the lab's global
 * gateway settings, read from Redis every second like every instance reads the lab: when they change, the
 * configuration is rewritten and nginx reloaded. The lab shows the file (GATEWAY_RECORD_KEY), and each POST
 * nginx logs becomes a gateway lane on the timeline, shown to the order's owner.
 */
async function startNginx(options: {
  port: number;
  upstreams: Plan['apps'];
  prefix: string;
  redisUrl: string;
  databaseUrl: string;
  onGiveUp: () => void;
}): Promise<{ stop(): Promise<void> }> {
  const binary = ensureProgram(NGINX, log);
  // `nginx -v` prints "nginx version: nginx/1.22.1" on stderr.
  const server = spawnSync(binary, ['-v'], { encoding: 'utf8' })
    .stderr.trim()
    .replace(/^nginx version: /, '');
  // The app's Redis: one server, a Redis Cluster (decision 020), or through the Sentinels (019; then no URL).
  const { REDIS_SENTINELS: sentinels, REDIS_SENTINEL_NAME: name } = env();
  const redis = connectRedis(sentinels && name && !options.redisUrl ? { sentinels, name } : options.redisUrl);
  redis.on('error', () => {});
  const db = new pg.Pool({ connectionString: options.databaseUrl, max: 2 });
  db.on('error', () => {});
  const readSettings = async (): Promise<GatewaySettings> =>
    parseStoredLabSettings(await redis.get('lab:config').catch(() => null)).gateway;

  let applied = await readSettings();
  const nginx = nginxAt(binary, { prefix: options.prefix, port: options.port, upstreams: options.upstreams }, applied);
  let reloadedAt = Date.now();
  const pidFile = path.join(options.prefix, 'nginx.pid');
  await stopLeftover(pidFile, /nginx/, 'SIGTERM');
  const supervised = supervise('nginx', () => nginx.spawn(), { pidFile, log, onGiveUp: options.onGiveUp });
  await waitForApp(options.port, 15_000, supervised.current());
  log(
    `gateway: ${server} on 127.0.0.1:${options.port} → ` +
      `${options.upstreams.map((a) => `${a.name} (:${a.port})`).join(', ')}; configuration ${path.relative(ROOT, nginx.file)}`,
  );

  const record = (): GatewayRecord => ({
    server,
    file: path.relative(ROOT, nginx.file),
    config: nginx.config(),
    settings: applied,
    reloadedAt,
  });
  const show = () =>
    redis.set(GATEWAY_RECORD_KEY, JSON.stringify(record()), 'PX', GATEWAY_RECORD_TTL_MS).catch(() => {});
  await show();
  let busy = false;
  const poll = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const wanted = await readSettings();
      if (wanted.timeoutMs !== applied.timeoutMs || wanted.retries !== applied.retries) {
        await nginx.apply(wanted);
        applied = wanted;
        reloadedAt = Date.now();
        log(`gateway: ${wanted.timeoutMs} ms, ${wanted.retries} retries: configuration rewritten, nginx -s reload`);
      }
      await show();
    } catch (error) {
      log(error instanceof Error ? error.message : String(error));
    } finally {
      busy = false;
    }
  }, 1_000);
  poll.unref();

  // Each POST nginx logs, as a lane: the order's owner sees it in their own lab (the room sees every lane).
  const owners = new Map<string, string | undefined>();
  const ownerOf = async (orderNo: string) => {
    if (!orderNo) return undefined;
    if (!owners.has(orderNo)) {
      const { rows } = await db
        .query<{ owner: string | null }>('SELECT owner FROM orders WHERE order_no = $1', [orderNo])
        .catch(() => ({ rows: [] as Array<{ owner: string | null }> }));
      if (owners.size > 10_000) owners.clear();
      owners.set(orderNo, rows[0]?.owner ?? undefined);
    }
    return owners.get(orderNo);
  };
  const unfollow = nginx.follow(async (entry) => {
    const owner = await ownerOf(entry.order_no);
    const events: TimelineEvent[] = gatewayLane(entry, options.upstreams, applied.timeoutMs).map((event) =>
      owner ? { ...event, viewers: [viewerOf(owner)] } : event,
    );
    // As the app publishes them: to the room's timeline and to the order owner's lab.
    if (events.length > 0) await appendToTimeline(redis, { events }).catch(() => {});
  });

  return {
    stop: async () => {
      clearInterval(poll);
      unfollow();
      await supervised.stop();
      await redis.del(GATEWAY_RECORD_KEY).catch(() => {});
      redis.disconnect();
      await db.end().catch(() => {});
    },
  };
}
