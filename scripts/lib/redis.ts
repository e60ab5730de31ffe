// The embedded Redis: a real redis-server started on its own port, bound to loopback.
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createConnection } from 'node:net';
import path from 'node:path';
import type { RunningService } from './postgres.ts';
import { stopLeftover } from './processes.ts';

/** What every redis-server the project starts has in common: its port, on loopback only, in the foreground. */
export function loopbackServerArgs(port: number): string[] {
  // biome-ignore format: one flag and its value per line reads better
  return [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--protected-mode', 'yes',
    '--daemonize', 'no',
    '--loglevel', 'warning',
  ];
}

export async function startRedisServer(options: {
  binary: string;
  port: number;
  /** Where the pid file (and, when `persist`, the snapshot) lives. */
  dataDir: string;
  /** The demo keeps its snapshot across runs; tests keep nothing. */
  persist: boolean;
  /** Its memory's cap (redis-server's `maxmemory`): 256 MB unless said otherwise. */
  maxMemory?: string;
  log?: (line: string) => void;
}): Promise<RunningService> {
  const { binary, port, dataDir } = options;
  await mkdir(dataDir, { recursive: true });
  const pidFile = path.join(dataDir, 'redis.pid');
  // A launcher killed with SIGKILL leaves its redis-server running, orphaned: stop it first.
  await stopLeftover(pidFile, /redis-server/, 'SIGTERM');
  if (await answersPing(port)) {
    throw new Error(`Another Redis already answers on 127.0.0.1:${port}. Set EMBEDDED_REDIS_PORT to a free port.`);
  }
  // biome-ignore format: one flag and its value per line reads better
  const args = [
    ...loopbackServerArgs(port),
    '--appendonly', 'no',
    // Bounded, and never evicting: an evicted idempotency key or token would silently let a duplicate
    // through. Full, Redis refuses writes (OOM) and the app answers 503: closed, not open (decision 010).
    '--maxmemory', options.maxMemory ?? '256mb',
    '--maxmemory-policy', 'noeviction',
    '--dir', dataDir,
    '--pidfile', pidFile,
    '--save', options.persist ? '60 1' : '',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      const reason = output.trim().split('\n').pop() ?? 'no output';
      throw new Error(
        `redis-server did not start on 127.0.0.1:${port} (${reason}). Is the port taken? Set EMBEDDED_REDIS_PORT to another port.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.stdout.removeListener('data', collect);
  child.stderr.removeListener('data', collect);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); // saves, then exits
      await exited;
    },
  };
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}
