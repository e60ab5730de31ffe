// The embedded Redis: a real redis-server started on its own port, bound to loopback.
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createConnection } from 'node:net';
import type { RunningService } from './postgres.ts';

export async function startRedisServer(options: {
  binary: string;
  port: number;
  /** Where the demo keeps its snapshot; tests keep nothing on disk. */
  dataDir?: string;
  log?: (line: string) => void;
}): Promise<RunningService> {
  const { binary, port, dataDir } = options;
  if (dataDir) await mkdir(dataDir, { recursive: true });
  if (await answersPing(port)) {
    throw new Error(`Another Redis already answers on 127.0.0.1:${port}. Set EMBEDDED_REDIS_PORT to a free port.`);
  }
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--protected-mode',
    'yes',
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
    '--appendonly',
    'no',
    ...(dataDir ? ['--dir', dataDir, '--save', '60 1'] : ['--save', '']),
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
