// A Redis Sentinel topology for the tests: a primary, one replica and three Sentinels (quorum 2), real
// redis-server processes on loopback, with timings short enough to fail over within a test (the primary is
// judged down after 1 s without an answer). It starts them in order and waits until the Sentinels know the
// replica and each other (a failover needs both); `stop()` ends every process it started, paused ones too,
// and so does this process's exit. A run killed with SIGKILL leaves them behind: the next start stops them
// (their pid files) before it begins.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { outputCollector, stopLeftover } from './processes.ts';
import { until } from './until.ts';

export type SentinelAddress = { host: string; port: number };

/** One redis-server process of the topology. */
export type TopologyNode = {
  role: 'primary' | 'replica' | 'sentinel';
  port: number;
  pid: number;
  /** Sends a signal: SIGSTOP pauses it (it holds its sockets and answers nothing), SIGCONT resumes it. */
  signal: (signal: NodeJS.Signals) => void;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
};

export type SentinelTopology = {
  /** The name the Sentinels monitor the primary under (REDIS_SENTINEL_NAME). */
  name: string;
  /** `host:port,…` (REDIS_SENTINELS). */
  sentinelList: string;
  primary: TopologyNode;
  replica: TopologyNode;
  sentinels: TopologyNode[];
  /** A connection of the test's own to a data node (commands fail at once when it is down or paused). */
  connect: (node: TopologyNode) => Redis;
  /** The address the Sentinels name as the primary now (the first that answers). */
  primaryAddress: () => Promise<SentinelAddress | undefined>;
  /** The last lines the processes printed, for a failure message. */
  output: () => string;
  stop: () => Promise<void>;
};

const HOST = '127.0.0.1';

/**
 * Starts the topology on `basePort` (primary), `basePort + 1` (replica) and `basePort + 5..7` (Sentinels),
 * keeping its files in `dataDir` (emptied first). Nothing is persisted.
 */
export async function startSentinelTopology(options: {
  binary: string;
  basePort: number;
  dataDir: string;
  name?: string;
  /** How long a node must be silent before a Sentinel calls it down. */
  downAfterMs?: number;
}): Promise<SentinelTopology> {
  const { binary, basePort, dataDir } = options;
  const name = options.name ?? 'payonce';
  const downAfterMs = options.downAfterMs ?? 1_000;
  const started: TopologyNode[] = [];
  const { collect, text: output } = outputCollector(30_000);
  const admin: Redis[] = [];
  const stop = async () => {
    for (const client of admin.splice(0)) client.disconnect();
    // SIGKILL ends a paused process too; nothing here is worth saving.
    for (const node of started) node.signal('SIGKILL');
    await Promise.all(started.map((node) => node.exited));
    process.removeListener('exit', killAll);
  };
  // The last resort: this process ends without calling stop() (a test framework's worker torn down).
  const killAll = () => {
    for (const node of started) node.signal('SIGKILL');
  };
  process.on('exit', killAll);

  const dirOf = (port: number) => path.join(dataDir, String(port));
  const ports = { primary: basePort, replica: basePort + 1, sentinels: [basePort + 5, basePort + 6, basePort + 7] };
  const all = [ports.primary, ports.replica, ...ports.sentinels];
  // Left behind by a run that was killed: stop them before taking their ports.
  for (const port of all) await stopLeftover(path.join(dirOf(port), 'redis.pid'), /redis-server/, 'SIGKILL');
  await rm(dataDir, { recursive: true, force: true });

  const launch = async (role: TopologyNode['role'], port: number, args: string[]): Promise<TopologyNode> => {
    const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', collect(`[${role} ${port}]`));
    child.stderr?.on('data', collect(`[${role} ${port}]`));
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    const node: TopologyNode = {
      role,
      port,
      pid: child.pid ?? -1,
      exited,
      signal: (signal) => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      },
    };
    started.push(node);
    await until(`the ${role} on ${HOST}:${port} answers`, async () => {
      if (child.exitCode !== null) throw new Error(`the ${role} on port ${port} exited: ${output().slice(-2_000)}`);
      return (await ping(port)) || undefined;
    });
    return node;
  };

  const dataNode = async (role: 'primary' | 'replica', port: number, more: string[]) => {
    await mkdir(dirOf(port), { recursive: true });
    // biome-ignore format: one flag and its value per line reads better
    return launch(role, port, [
      '--port', String(port),
      '--bind', HOST,
      '--daemonize', 'no',
      '--loglevel', 'notice',
      '--appendonly', 'no',
      '--save', '',
      '--dir', dirOf(port),
      '--pidfile', path.join(dirOf(port), 'redis.pid'),
      ...more,
    ]);
  };

  try {
    // No 5 s wait for more replicas before the first (diskless) sync: the replica is in sync at once.
    const primary = await dataNode('primary', ports.primary, ['--repl-diskless-sync-delay', '0']);
    const replica = await dataNode('replica', ports.replica, ['--replicaof', HOST, String(ports.primary)]);
    const connect = (node: TopologyNode) => {
      // No reconnection: once its node is gone, a command fails at once (or times out, the node paused).
      const client = new Redis({
        host: HOST,
        port: node.port,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        commandTimeout: 2_000,
      });
      client.on('error', () => {});
      admin.push(client);
      return client;
    };
    // The replica has synced before the Sentinels come: their first look at the primary finds it.
    const replicaAdmin = connect(replica);
    await until('the replica to sync with the primary', async () =>
      /master_link_status:up/.test(await replicaAdmin.info('replication')) ? true : undefined,
    );

    // Each Sentinel's id, chosen here so that each can be told about the others from the start.
    const ids = ports.sentinels.map(() => randomBytes(20).toString('hex'));
    const sentinels: TopologyNode[] = [];
    for (const [index, port] of ports.sentinels.entries()) {
      await mkdir(dirOf(port), { recursive: true });
      const config = path.join(dirOf(port), 'sentinel.conf');
      // A Sentinel rewrites its configuration file (what it learns about replicas and other Sentinels, the
      // new primary after a failover): each has its own, writable, in its own folder.
      await writeFile(
        config,
        [
          `port ${port}`,
          `bind ${HOST}`,
          'daemonize no',
          `pidfile ${path.join(dirOf(port), 'redis.pid')}`,
          `dir ${dirOf(port)}`,
          `sentinel monitor ${name} ${HOST} ${ports.primary} 2`,
          `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
          // A failover that finds no replica to promote (or loses its election) is tried again after twice this.
          `sentinel failover-timeout ${name} 2000`,
          `sentinel parallel-syncs ${name} 1`,
          // What a Sentinel would learn within seconds (from the primary's INFO, and the others' hello messages
          // every 2 s) and keep in this file: given from the start, the topology is ready at once.
          `sentinel myid ${ids[index]}`,
          `sentinel known-replica ${name} ${HOST} ${ports.replica}`,
          ...ports.sentinels.flatMap((other, i) =>
            i === index ? [] : [`sentinel known-sentinel ${name} ${HOST} ${other} ${ids[i]}`],
          ),
          '',
        ].join('\n'),
      );
      sentinels.push(await launch('sentinel', port, [config, '--sentinel']));
    }
    const sentinelClients = sentinels.map((node) => connect(node));
    // Ready when every Sentinel knows the replica and the two other Sentinels (they introduce themselves
    // every 2 s on the primary): before that, a quorum could not be reached, or nobody would be promoted.
    await until('the Sentinels to know the replica and each other', async () => {
      for (const client of sentinelClients) {
        const fields = (await client.call('SENTINEL', 'MASTER', name)) as string[];
        const field = (key: string) => fields[fields.indexOf(key) + 1];
        if (field('num-slaves') !== '1' || field('num-other-sentinels') !== '2') return undefined;
      }
      return true;
    });

    return {
      name,
      sentinelList: ports.sentinels.map((port) => `${HOST}:${port}`).join(','),
      primary,
      replica,
      sentinels,
      connect,
      primaryAddress: async () => {
        for (const client of sentinelClients) {
          const ask = client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name) as Promise<string[] | null>;
          const reply = await ask.catch(() => null);
          if (reply?.[0] && reply[1]) return { host: reply[0], port: Number(reply[1]) };
        }
        return undefined;
      },
      output,
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output().slice(-5_000)}`);
  }
}

async function ping(port: number): Promise<boolean> {
  const client = new Redis({ host: HOST, port, retryStrategy: () => null, lazyConnect: true, connectTimeout: 500 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
