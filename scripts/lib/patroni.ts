// A PostgreSQL topology that fails over, for the scenarios and the benchmark: a primary and a streaming replica,
// each run by Patroni (Debian's `patroni`, with Debian's PostgreSQL, whose bin folder has pg_basebackup: the
// embedded server's has not), one etcd for Patroni's leader key, and HAProxy in front, which sends each new
// connection to the node whose Patroni answers 200 on /primary, and cuts the connections to a node that stops
// answering it (node-postgres takes no multi-host URL: HAProxy is Patroni's own documented way in). Real
// processes on loopback, with timings short enough to fail over within a test: the leader key lives 10 s
// unrenewed. `stop()` ends every process it started, and so does this process's exit.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdir, rm, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { outputCollector } from './processes.ts';
import { ensureProgram, type SystemProgram } from './system-programs.ts';
import { until } from './until.ts';

const HOST = '127.0.0.1';
/** Patroni's cluster name (its keys in etcd live under /service/<scope>). */
const SCOPE = 'payonce';

export const PATRONI: SystemProgram = {
  name: 'patroni',
  candidates: ['/usr/bin/patroni', '/usr/local/bin/patroni'],
  apt: 'patroni',
  brew: 'patroni',
  image: 'patroni (its Dockerfile)',
};
export const ETCD: SystemProgram = {
  name: 'etcd',
  candidates: ['/usr/bin/etcd', '/usr/local/bin/etcd'],
  apt: 'etcd-server',
  brew: 'etcd',
  image: 'quay.io/coreos/etcd',
};
export const HAPROXY: SystemProgram = {
  name: 'haproxy',
  candidates: ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy', '/opt/homebrew/bin/haproxy'],
  apt: 'haproxy',
  brew: 'haproxy',
  image: 'haproxy:2.6',
};

/** Debian's newest PostgreSQL server (its bin folder, with initdb, pg_ctl and pg_basebackup). */
function debianPostgres(log: (line: string) => void): string {
  const newest = () => {
    const root = '/usr/lib/postgresql';
    const versions = existsSync(root)
      ? readdirSync(root)
          .filter((version) => existsSync(path.join(root, version, 'bin/pg_basebackup')))
          .sort((a, b) => Number(b) - Number(a))
      : [];
    return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
  };
  const found = newest();
  if (found) return found;
  const server = ensureProgram(
    { name: 'pg_basebackup', candidates: [], apt: 'postgresql', brew: 'postgresql', image: 'postgres' },
    log,
  );
  return newest() ?? path.dirname(server);
}

export type PatroniNode = {
  name: string;
  /** PostgreSQL's port on this node, and Patroni's REST API's. */
  port: number;
  restPort: number;
  /** Kills the node whole, Patroni and its PostgreSQL: the machine is lost (SIGKILL, nothing flushed). */
  kill: () => Promise<void>;
  /** A statement on this node itself, not through HAProxy. */
  query: <T extends pg.QueryResultRow>(text: string) => Promise<T[]>;
};

export type PatroniTopology = {
  /** Through HAProxy to the primary, whichever node it is: what the app is given as DATABASE_URL. */
  url: string;
  nodes: [PatroniNode, PatroniNode];
  /** The node Patroni names the leader now (asked of the nodes that answer), if any. */
  leader: () => Promise<string | undefined>;
  /** Waits until `name` is the leader and HAProxy sends connections to it. */
  untilPrimary: (name: string, timeoutMs?: number) => Promise<void>;
  /** Waits until the replica has replayed everything the primary has written (asked of both). */
  untilReplicaCaughtUp: () => Promise<void>;
  /**
   * Turns Patroni's synchronous mode on or off for the running cluster (its configuration in etcd), and waits
   * until the primary replicates that way.
   */
  setSynchronous: (on: boolean) => Promise<void>;
  /** The last lines the processes printed, for a failure message. */
  output: () => string;
  stop: () => Promise<void>;
};

/**
 * Starts etcd on `basePort` (its peer port + 1), two Patroni nodes (PostgreSQL on + 2 and + 3, their REST APIs on
 * + 4 and + 5) and HAProxy on + 6, keeping their files in `dataDir` (emptied first). The first node bootstraps
 * the cluster and leads; the second is made a replica of it by pg_basebackup. `synchronous`: Patroni's
 * synchronous mode (a commit returns only once the replica has it on disk) rather than PostgreSQL's default,
 * asynchronous replication.
 */
export async function startPatroniTopology(options: {
  basePort: number;
  dataDir: string;
  synchronous: boolean;
  log?: (line: string) => void;
}): Promise<PatroniTopology> {
  const { basePort, dataDir, synchronous } = options;
  const log = options.log ?? console.log;
  const programs = {
    patroni: ensureProgram(PATRONI, log),
    etcd: ensureProgram(ETCD, log),
    haproxy: ensureProgram(HAPROXY, log),
    postgres: debianPostgres(log),
  };
  // PostgreSQL refuses to run as root: as root, Patroni (and so its PostgreSQL) runs as Debian's postgres user, who
  // must be able to reach `dataDir` (the callers keep it under the system's temporary folder).
  const runAs = userInfo().uid === 0 ? owner('postgres') : undefined;

  const started: Array<{ child: ChildProcess; exited: Promise<void> }> = [];
  const { collect, text: output } = outputCollector(40_000);
  // Each process leads its own process group (detached): a node's kill takes its PostgreSQL with its Patroni.
  const killGroup = (child: ChildProcess) => {
    try {
      if (child.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  // Patroni starts PostgreSQL in a session of its own: each node's postmaster is killed by its pid file (its
  // backends end when they see it gone).
  const homes: string[] = [];
  const killPostmaster = (home: string) => {
    let pid = 0;
    try {
      pid = Number.parseInt(readFileSync(path.join(home, 'data/postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
      if (pid > 0) process.kill(pid, 'SIGKILL');
    } catch {
      // no pid file, or already gone
    }
  };
  const killAll = () => {
    for (const { child } of started) killGroup(child);
    for (const home of homes) killPostmaster(home);
  };
  process.on('exit', killAll);
  const stop = async () => {
    killAll();
    await Promise.all(started.map(({ exited }) => exited));
    process.removeListener('exit', killAll);
  };
  const launch = (label: string, command: string, args: string[], asUser = false) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(asUser && runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      env: { ...process.env, ...(asUser && runAs ? { HOME: dataDir, USER: 'postgres' } : {}) },
    });
    child.stdout?.on('data', collect(`[${label}]`));
    child.stderr?.on('data', collect(`[${label}]`));
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    started.push({ child, exited });
    return { child, exited };
  };

  const ports = {
    etcd: basePort,
    etcdPeer: basePort + 1,
    postgres: [basePort + 2, basePort + 3],
    rest: [basePort + 4, basePort + 5],
    haproxy: basePort + 6,
  };
  // Left behind by a run that was killed: whatever still listens on these ports is this topology's (its group).
  killListeners([ports.etcd, ports.etcdPeer, ...ports.postgres, ...ports.rest, ports.haproxy]);
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(dataDir, { recursive: true });
  if (runAs) await chown(dataDir, runAs.uid, runAs.gid);

  try {
    const etcdUrl = `http://${HOST}:${ports.etcd}`;
    const peerUrl = `http://${HOST}:${ports.etcdPeer}`;
    // biome-ignore format: one flag and its value per line reads better
    launch('etcd', programs.etcd, [
      '--name', 'etcd1',
      '--data-dir', path.join(dataDir, 'etcd'),
      '--listen-client-urls', etcdUrl,
      '--advertise-client-urls', etcdUrl,
      '--listen-peer-urls', peerUrl,
      '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', `etcd1=${peerUrl}`,
      '--log-level', 'warn',
    ]);
    await until('etcd to answer', async () => ((await fetchOk(`${etcdUrl}/health`)) ? true : undefined));

    const nodes = ([0, 1] as const).map((index): PatroniNode & { start: () => Promise<void> } => {
      const name = `pg${index + 1}`;
      const port = ports.postgres[index] ?? 0;
      const restPort = ports.rest[index] ?? 0;
      const home = path.join(dataDir, name);
      let process_: { child: ChildProcess; exited: Promise<void> } | undefined;
      return {
        name,
        port,
        restPort,
        start: async () => {
          homes.push(home);
          await mkdir(home, { recursive: true, mode: 0o700 });
          if (runAs) await chown(home, runAs.uid, runAs.gid);
          const config = path.join(home, 'patroni.yml');
          await writeFile(
            config,
            patroniConfig({ name, home, port, restPort, etcd: ports.etcd, synchronous, programs }),
          );
          process_ = launch(name, programs.patroni, [config], true);
        },
        kill: async () => {
          if (!process_) return;
          killGroup(process_.child);
          killPostmaster(home);
          await process_.exited;
          await until(`${name}'s PostgreSQL to be gone`, async () => ((await listens(port)) ? undefined : true));
        },
        query: async <T extends pg.QueryResultRow>(text: string) => {
          const client = new pg.Client({
            host: HOST,
            port,
            user: 'postgres',
            database: 'postgres',
            connectionTimeoutMillis: 2_000,
          });
          client.on('error', () => {});
          await client.connect();
          try {
            return (await client.query<T>(text)).rows;
          } finally {
            await client.end().catch(() => {});
          }
        },
      };
    });
    const [first, second] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    const role = async (node: PatroniNode) => {
      const response = await fetch(`http://${HOST}:${node.restPort}/patroni`, { signal: AbortSignal.timeout(1_000) });
      return ((await response.json()) as { role?: string; state?: string }).role;
    };
    await first.start();
    await until(
      `${first.name} to lead`,
      async () => ((await role(first)) === 'master' ? true : undefined),
      90_000,
      200,
    );
    await second.start();
    await until(
      `${second.name} to stream from ${first.name}`,
      async () => {
        const rows = await first.query<{ state: string; sync_state: string }>(
          'SELECT state, sync_state FROM pg_stat_replication',
        );
        const row = rows[0];
        if (row?.state !== 'streaming') return undefined;
        return !synchronous || row.sync_state === 'sync' ? true : undefined;
      },
      120_000,
      200,
    );

    await writeFile(
      path.join(dataDir, 'haproxy.cfg'),
      haproxyConfig(
        ports.haproxy,
        nodes.map((node) => ({ name: node.name, port: node.port, restPort: node.restPort })),
      ),
    );
    launch('haproxy', programs.haproxy, ['-db', '-f', path.join(dataDir, 'haproxy.cfg')]);
    const url = `postgresql://postgres@${HOST}:${ports.haproxy}/postgres`;

    const leader = async () => {
      for (const node of nodes) {
        try {
          const response = await fetch(`http://${HOST}:${node.restPort}/cluster`, {
            signal: AbortSignal.timeout(1_000),
          });
          const { members } = (await response.json()) as { members: Array<{ name: string; role: string }> };
          const found = members.find((member) => member.role === 'leader' || member.role === 'sync_standby_leader');
          if (found) return found.name;
        } catch {
          // this node is down: ask the next
        }
      }
      return undefined;
    };
    const untilPrimary = async (name: string, timeoutMs = 60_000) => {
      const node = nodes.find((candidate) => candidate.name === name);
      const landsOnIt = async () => {
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
        client.on('error', () => {});
        try {
          await client.connect();
          const { rows } = await client.query<{ port: number; recovery: boolean }>(
            'SELECT inet_server_port() AS port, pg_is_in_recovery() AS recovery',
          );
          return rows[0] !== undefined && !rows[0].recovery && rows[0].port === node?.port;
        } finally {
          await client.end().catch(() => {});
        }
      };
      await until(
        `${name} to be the primary behind HAProxy`,
        // Three connections in a row: one could land on a node HAProxy has not checked yet.
        async () => ((await landsOnIt()) && (await landsOnIt()) && (await landsOnIt()) ? true : undefined),
        timeoutMs,
        200,
      );
    };
    await untilPrimary(first.name);
    return {
      url,
      nodes: [first, second],
      leader,
      untilPrimary,
      untilReplicaCaughtUp: async () => {
        const [lsn] = await first.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
        await until('the replica to replay what the primary wrote', async () => {
          const [row] = await second.query<{ behind: boolean }>(
            `SELECT pg_last_wal_replay_lsn() < '${lsn?.lsn}'::pg_lsn AS behind`,
          );
          return row && !row.behind ? true : undefined;
        });
      },
      setSynchronous: async (on: boolean) => {
        const response = await fetch(`http://${HOST}:${first.restPort}/config`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ synchronous_mode: on }),
        });
        if (!response.ok) throw new Error(`Patroni refused the configuration: ${response.status}`);
        await until(`replication to be ${on ? 'synchronous' : 'asynchronous'}`, async () => {
          const [row] = await first.query<{ sync_state: string }>('SELECT sync_state FROM pg_stat_replication');
          return row?.sync_state === (on ? 'sync' : 'async') ? true : undefined;
        });
      },
      output,
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output().slice(-6_000)}`);
  }
}

function patroniConfig(node: {
  name: string;
  home: string;
  port: number;
  restPort: number;
  etcd: number;
  synchronous: boolean;
  programs: { postgres: string };
}): string {
  // JSON is YAML: no YAML library for one file.
  return JSON.stringify(
    {
      scope: SCOPE,
      name: node.name,
      restapi: { listen: `${HOST}:${node.restPort}`, connect_address: `${HOST}:${node.restPort}` },
      etcd3: { hosts: [`${HOST}:${node.etcd}`] },
      log: { level: 'WARNING' },
      bootstrap: {
        dcs: {
          // The leader key lives 10 s unless its holder renews it (every second): a lost primary is replaced
          // within about 10 s. loop_wait + 2 x retry_timeout must stay within ttl.
          ttl: 10,
          loop_wait: 1,
          retry_timeout: 3,
          // Patroni promotes a replica at most this far behind (bytes of WAL) the last position the leader
          // published: the default 1 MB, so that the replica that missed the lost commits is still promoted.
          maximum_lag_on_failover: 1_048_576,
          synchronous_mode: node.synchronous,
          postgresql: {
            use_pg_rewind: false,
            parameters: {
              wal_level: 'replica',
              hot_standby: 'on',
              max_wal_senders: 5,
              max_replication_slots: 5,
              wal_keep_size: '64MB',
              max_connections: 100,
              fsync: 'on',
              synchronous_commit: 'on',
            },
          },
        },
        initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
      },
      postgresql: {
        listen: `${HOST}:${node.port}`,
        connect_address: `${HOST}:${node.port}`,
        data_dir: path.join(node.home, 'data'),
        bin_dir: node.programs.postgres,
        pgpass: path.join(node.home, 'pgpass'),
        authentication: {
          superuser: { username: 'postgres', password: 'postgres' },
          replication: { username: 'replicator', password: 'replicator' },
        },
        // Loopback only, and trusted: a test topology on one machine.
        pg_hba: ['local all all trust', `host all all ${HOST}/32 trust`, `host replication all ${HOST}/32 trust`],
        parameters: { unix_socket_directories: node.home, shared_buffers: '64MB' },
      },
      tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
    },
    null,
    2,
  );
}

function haproxyConfig(port: number, nodes: Array<{ name: string; port: number; restPort: number }>): string {
  return [
    'global',
    '  maxconn 400',
    'defaults',
    '  mode tcp',
    '  timeout connect 1s',
    // Patroni's REST API is Python: a busy machine may take a second to answer a check, which is no reason to
    // call the primary down.
    '  timeout check 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    'listen primary',
    `  bind ${HOST}:${port}`,
    // The first server that is up, in order: before the first checks both count as up, and the first leads then.
    '  balance first',
    // Patroni answers 200 on /primary only on the node that holds the leader key and runs as primary.
    '  option httpchk',
    '  http-check send meth GET uri /primary',
    '  http-check expect status 200',
    // Checked every 500 ms; down after 3 failed checks, and then its connections are cut (the app's pool
    // reconnects, through here, to the new primary); up after one.
    '  default-server inter 500ms fall 3 rise 1 on-marked-down shutdown-sessions',
    ...nodes.map((node) => `  server ${node.name} ${HOST}:${node.port} maxconn 100 check port ${node.restPort}`),
    '',
  ].join('\n');
}

function owner(user: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

async function fetchOk(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1_000) })).ok;
  } catch {
    return false;
  }
}

async function listens(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Kills the process groups of whatever listens on these loopback ports (a killed run's leftovers). */
function killListeners(ports: number[]): void {
  let out = '';
  try {
    out = execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' });
  } catch {
    return;
  }
  for (const line of out.split('\n')) {
    const port = Number(/127\.0\.0\.1:(\d+)\s/.exec(line)?.[1]);
    if (!ports.includes(port)) continue;
    for (const match of line.matchAll(/pid=(\d+)/g)) {
      const pid = Number(match[1]);
      try {
        process.kill(-Number(execFileSync('ps', ['-o', 'pgid=', String(pid)], { encoding: 'utf8' }).trim()), 'SIGKILL');
      } catch {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  }
}
