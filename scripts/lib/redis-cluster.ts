// A local Redis Cluster for the tests (decision 020): three primaries of the same redis-server the project
// already needs, no replicas, on loopback. The cluster is made with the commands `redis-cli --cluster create`
// sends (ADDSLOTSRANGE, SET-CONFIG-EPOCH, MEET), without its one-second waits, then awaited until every node
// says cluster_state:ok and knows every slot. Every node it started is stopped by stop(), and on a failure to
// start before the error is thrown; a node left by a run killed with SIGKILL is stopped by the next run.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import { stopLeftover } from './processes.ts';
import { loopbackServerArgs } from './redis.ts';

const SLOTS = 16_384;

export type RunningCluster = {
  /** REDIS_URL for it: redis-cluster://127.0.0.1:<port>,… */
  url: string;
  ports: number[];
  stop: () => Promise<void>;
};

/** Resolves when 127.0.0.1:port can be listened on now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

type Node = { port: number; busPort: number; child: ChildProcess; exited: Promise<void>; output: () => string };

function startNode(binary: string, port: number, busPort: number, dir: string): Node {
  // biome-ignore format: one flag and its value per line reads better
  const args = [
    ...loopbackServerArgs(port),
    '--cluster-enabled', 'yes',
    // Its own, in its own folder: a node writes its view of the cluster there.
    '--cluster-config-file', path.join(dir, 'nodes.conf'),
    // The bus on a port of the test range (not port + 10000, in Linux's range of outgoing ports).
    '--cluster-port', String(busPort),
    '--appendonly', 'no',
    '--save', '',
    // As the embedded server: bounded, never evicting an idempotency key (decision 017).
    '--maxmemory', '64mb',
    '--maxmemory-policy', 'noeviction',
    '--dir', dir,
    '--pidfile', path.join(dir, 'redis.pid'),
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  return { port, busPort, child, exited, output: () => output };
}

async function stopNode(node: Node): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  node.child.kill('SIGTERM');
  const killer = setTimeout(() => node.child.kill('SIGKILL'), 5_000);
  await node.exited;
  clearTimeout(killer);
}

/**
 * Starts `primaries` nodes on ports `firstPort`…, their cluster buses on the ports right after them
 * (firstPort + primaries…), and makes one cluster of them. `dataDir` is emptied first.
 */
export async function startRedisCluster(options: {
  binary: string;
  firstPort: number;
  primaries?: number;
  dataDir: string;
  log?: (line: string) => void;
}): Promise<RunningCluster> {
  const count = options.primaries ?? 3;
  const ports = Array.from({ length: count }, (_, i) => options.firstPort + i);
  const busPorts = ports.map((port) => port + count);
  const dirs = ports.map((port) => path.join(options.dataDir, String(port)));
  // A run killed with SIGKILL leaves its nodes running, orphaned: stop them first.
  for (const dir of dirs) await stopLeftover(path.join(dir, 'redis.pid'), /redis-server/, 'SIGTERM');
  for (const port of [...ports, ...busPorts]) {
    if (!(await isFree(port))) {
      throw new Error(
        `Port ${port} on 127.0.0.1 is taken: the test Redis Cluster needs ${ports[0]}-${busPorts.at(-1)} (TEST_PORT_OFFSET shifts them).`,
      );
    }
  }
  await rm(options.dataDir, { recursive: true, force: true });
  for (const dir of dirs) await mkdir(dir, { recursive: true });

  const nodes: Node[] = [];
  const admins: Redis[] = [];
  const stop = async () => {
    for (const admin of admins.splice(0)) admin.disconnect();
    await Promise.all(nodes.splice(0).map(stopNode));
  };
  try {
    ports.forEach((port, i) => {
      nodes.push(startNode(options.binary, port, busPorts[i] as number, dirs[i] as string));
    });
    for (const node of nodes) {
      const admin = new Redis({ host: '127.0.0.1', port: node.port, lazyConnect: true, retryStrategy: () => null });
      admin.on('error', () => {});
      admins.push(admin);
      await untilTrue(`redis-server on 127.0.0.1:${node.port} to answer`, async () => {
        if (node.child.exitCode !== null) {
          throw new Error(`redis-server on 127.0.0.1:${node.port} exited: ${node.output().trim().split('\n').pop()}`);
        }
        if (admin.status === 'end' || admin.status === 'wait') await admin.connect().catch(() => {});
        return (await admin.ping().catch(() => '')) === 'PONG';
      });
    }
    // Each primary its share of the 16384 slots, and an epoch of its own; then the first meets the others.
    await Promise.all(
      admins.map(async (admin, i) => {
        const first = Math.floor((SLOTS * i) / count);
        const last = Math.floor((SLOTS * (i + 1)) / count) - 1;
        await admin.call('CLUSTER', 'ADDSLOTSRANGE', String(first), String(last));
        await admin.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1));
      }),
    );
    const [introducer] = admins;
    for (const [i, port] of ports.entries()) {
      if (i > 0) await introducer?.call('CLUSTER', 'MEET', '127.0.0.1', String(port), String(busPorts[i]));
    }
    await untilTrue('the Redis Cluster to be ready (cluster_state:ok on every node)', async () => {
      const infos = await Promise.all(admins.map((admin) => admin.call('CLUSTER', 'INFO') as Promise<string>));
      return infos.every(
        (info) =>
          info.includes('cluster_state:ok') &&
          info.includes(`cluster_slots_ok:${SLOTS}`) &&
          info.includes(`cluster_known_nodes:${count}`),
      );
    });
    for (const admin of admins.splice(0)) admin.disconnect();
    options.log?.(`Redis Cluster of ${count} primaries on 127.0.0.1:${ports.join(',')}`);
    return { url: `redis-cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`, ports, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function untilTrue(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
