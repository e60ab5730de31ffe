// What `npm run demo` and `npm run demo:cluster` have in common:
//   1. validate the configuration (lib/env.ts)
//   2. start the embedded PostgreSQL and Redis, unless DATABASE_URL / REDIS_URL name servers to use
//   3. apply the committed migrations
//   4. build the app if the sources changed; start the app instance(s) and the receipt worker, supervised
//      (the lab's crash faults kill them on purpose: they come back, and reconciliation settles the rest)
//   5. cluster: a gateway in front of the instances, retrying on timeouts and dead instances
//   6. on Ctrl-C or SIGTERM: the gateway, the apps and the worker, then the services; nothing is left running
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { env } from '../../lib/env.ts';
import { ownAddresses } from '../../lib/http/hosts.ts';
import { isExposed } from '../../lib/http/presenter.ts';
import { DEFAULT_LAB_SETTINGS, type GatewaySettings, parseStoredLabSettings } from '../../lib/lab/settings.ts';
import type { TimelineEvent } from '../../lib/lab/timeline-event.ts';
import { connectRedis, type RedisClient } from '../../lib/redis.ts';
import { startGateway } from './gateway.ts';
import { applyMigrations } from './migrations.ts';
import { buildApp, buildIsStale, nextEnv, startApp, waitForApp } from './next-app.ts';
import { ROOT } from './paths.ts';
import { stopLeftover } from './processes.ts';
import { startServices } from './services.ts';
import { loadOrCreateSessionSecret } from './session-secret.ts';
import { type Supervised, supervise } from './supervisor.ts';

export type Plan = {
  /** The app instances: one for the demo, two behind the gateway for the cluster. */
  apps: Array<{ name: string; port: number }>;
  /** The port the user opens: the single app's, or the gateway's. */
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
    postgresPort: config.EMBEDDED_POSTGRES_PORT,
    redisPort: config.EMBEDDED_REDIS_PORT,
    log,
  });
  log(services.started.length > 0 ? `started ${services.started.join(' and ')}` : 'using the servers you configured');

  const children: Supervised[] = [];
  let gateway: { close(): Promise<void> } | undefined;
  let redis: RedisClient | undefined;
  let stopping = false;
  const shutdown = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log(`${why}: stopping`);
    await gateway?.close();
    await Promise.all(children.map((child) => child.stop()));
    redis?.disconnect();
    await services.stop();
    log('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));

  try {
    const applied = await applyMigrations(services.databaseUrl);
    log(applied.length > 0 ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');
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
      const instanceEnv = { ...appEnv, INSTANCE_NAME: app.name, ...room.env };
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
    const workerPid = path.join(pidDir, 'worker.pid');
    await stopLeftover(workerPid, /scripts\/worker/, 'SIGTERM');
    children.push(
      supervise('receipt worker', () => startWorker(appEnv), { pidFile: workerPid, log, onGiveUp: giveUp }),
    );
    await Promise.all(plan.apps.map((app, i) => waitForApp(app.port, 60_000, children[i]?.current())));

    if (plan.gatewayPort !== undefined) {
      redis = connectRedis(services.redisUrl); // one server, or a Redis Cluster (decision 020)
      redis.on('error', () => {});
      const settings = await gatewaySettingsFrom(redis);
      gateway = await startGateway({
        port: plan.gatewayPort,
        upstreams: plan.apps,
        settings: () => settings.current,
        publish: (event: TimelineEvent) => {
          // The same shape as lib/lab/timeline.ts: one entry, a batch of events.
          redis?.xadd('lab:timeline', 'MAXLEN', '~', 1000, '*', 'events', JSON.stringify([event])).catch(() => {});
        },
      });
      log(`gateway on 127.0.0.1:${plan.gatewayPort} → ${plan.apps.map((a) => `${a.name} (:${a.port})`).join(', ')}`);
    }
    log(`ready: http://localhost:${plan.gatewayPort ?? plan.apps[0]?.port}  (Ctrl-C stops everything)`);
    for (const line of room.lines) log(line);
  } catch (error) {
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

function startWorker(workerEnv: NodeJS.ProcessEnv) {
  return spawn(
    process.execPath,
    ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'scripts/worker.ts')],
    {
      cwd: ROOT,
      env: workerEnv,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
}

/** The gateway's timeout and retries are lab settings: read from Redis every second, like every instance. */
async function gatewaySettingsFrom(redis: RedisClient): Promise<{ current: GatewaySettings }> {
  const holder = { current: DEFAULT_LAB_SETTINGS.gateway };
  const read = async () => {
    holder.current = parseStoredLabSettings(await redis.get('lab:config').catch(() => null)).gateway;
  };
  await read();
  setInterval(() => void read(), 1_000).unref();
  return holder;
}
