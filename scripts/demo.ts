// `npm run demo`: starts what the demo needs and serves it on http://localhost:3000.
//   1. validate the configuration (lib/env.ts)
//   2. start the embedded PostgreSQL and Redis, unless DATABASE_URL / REDIS_URL name servers to use
//   3. apply the committed migrations
//   4. build the app if the sources changed, then `next start` on 127.0.0.1
//   5. on Ctrl-C or SIGTERM, stop the app, then the services it started; nothing is left running
// The app is supervised: if it dies (the lab's "crash after charge" fault kills it on purpose), it is
// started again, and its start-up reconciliation settles the payment it left behind.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { env, InvalidEnvError } from '../lib/env.ts';
import { applyMigrations } from './lib/migrations.ts';
import { buildApp, buildIsStale, nextEnv, startApp, waitForApp } from './lib/next-app.ts';
import { ROOT } from './lib/paths.ts';
import { stopLeftover } from './lib/processes.ts';
import { startServices } from './lib/services.ts';
import { MissingProgramError } from './lib/system-programs.ts';

const log = (line: string) => console.log(`[demo] ${line}`);

async function main(): Promise<void> {
  const config = env();
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

  let app: ChildProcess | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    if (app && app.exitCode === null && app.signalCode === null) {
      const exited = new Promise((resolve) => app?.once('exit', resolve));
      app.kill('SIGTERM');
      await exited;
    }
    await services.stop();
    log('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));

  try {
    const applied = await applyMigrations(services.databaseUrl);
    log(applied.length > 0 ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');

    const appEnv = nextEnv({ DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl });
    if (buildIsStale()) {
      log('building the app (once, about a minute)...');
      buildApp(appEnv);
    }

    const port = config.PORT;
    // A launcher killed with SIGKILL leaves its app running on the port: stop that one first.
    const appPidFile = path.resolve(ROOT, config.DATA_DIR, 'demo', `app-${port}.pid`);
    mkdirSync(path.dirname(appPidFile), { recursive: true });
    await stopLeftover(appPidFile, /next/, 'SIGTERM');
    let restarts: number[] = [];
    const serve = () => {
      app = startApp({ port, env: appEnv });
      writeFileSync(appPidFile, String(app.pid));
      app.once('exit', (code, signal) => {
        if (stopping) return;
        restarts = [...restarts.filter((at) => Date.now() - at < 60_000), Date.now()];
        if (restarts.length > 5) {
          log(`the app keeps dying (${signal ?? code}); giving up`);
          void shutdown('crash loop');
          return;
        }
        log(`the app died (${signal ?? `exit ${code}`}); starting it again`);
        setTimeout(serve, 300);
      });
    };
    serve();
    await waitForApp(port, 60_000, app);
    log(`ready: http://localhost:${port}  (Ctrl-C stops everything)`);
  } catch (error) {
    await services.stop();
    throw error;
  }
}

main().catch((error: unknown) => {
  const known = error instanceof InvalidEnvError || error instanceof MissingProgramError;
  console.error(`[demo] ${known || error instanceof Error ? (error as Error).message : String(error)}`);
  process.exit(1);
});
