// Building and serving the Next.js app: shared by the demo, the tests and the benchmarks.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ROOT } from './paths.ts';

const NEXT_BIN = path.join(ROOT, 'node_modules/next/dist/bin/next');
const SOURCES = [
  'app',
  'lib',
  'messages',
  'public',
  'proxy.ts',
  'instrumentation.ts',
  'next.config.ts',
  'package-lock.json',
];

function newestMtime(entry: string): number {
  const full = path.join(ROOT, entry);
  if (!existsSync(full)) return 0;
  const stat = statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of readdirSync(full)) newest = Math.max(newest, newestMtime(path.join(entry, child)));
  return newest;
}

/** True when there is no production build, or a source file changed since it was made. */
export function buildIsStale(): boolean {
  const buildId = path.join(ROOT, '.next/BUILD_ID');
  if (!existsSync(buildId)) return true;
  const built = statSync(buildId).mtimeMs;
  return SOURCES.some((entry) => newestMtime(entry) > built);
}

export function nextEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...extra };
}

/** `next build`, with its output shown. Throws when the build fails. */
export function buildApp(env: NodeJS.ProcessEnv): void {
  const result = spawnSync(process.execPath, [NEXT_BIN, 'build'], { cwd: ROOT, env, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('next build failed (see its output above)');
}

/**
 * How long the app keeps an idle keep-alive connection (Node's default is 5 s). A client that reuses a pooled
 * connection at the moment the server closes it gets "socket hang up" for a request that never arrived; clients
 * that ignore the server's Keep-Alive hint (Playwright's request context: microsoft/playwright#42701) meet that
 * moment every few seconds under load. Held longer than any client keeps one, the closing is the client's. Under
 * Node's 60 s headersTimeout.
 */
export const KEEP_ALIVE_MS = 55_000;

/**
 * `next start`, on loopback unless `host` says otherwise (the demo exposed to a room). `capture`: its output is
 * piped to the caller (tests), which must read it.
 */
export function startApp(options: {
  port: number;
  env: NodeJS.ProcessEnv;
  host?: string;
  quiet?: boolean;
  capture?: boolean;
}): ChildProcess {
  const address = ['-H', options.host ?? '127.0.0.1', '-p', String(options.port)];
  return spawn(process.execPath, [NEXT_BIN, 'start', ...address, '--keepAliveTimeout', String(KEEP_ALIVE_MS)], {
    cwd: ROOT,
    env: { ...options.env, NODE_ENV: 'production' },
    stdio: options.capture ? ['ignore', 'pipe', 'pipe'] : options.quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
  });
}

/**
 * One request to the app's health route, on a connection closed after it. A connection kept alive (fetch's) held the
 * app's graceful stop: Next.js closes the idle connections when told to stop, but not one whose answer was still
 * being read (cancelled, or in flight at that moment), which it then waited for to its keep-alive's end (55 s), and
 * the launcher killed it 10 s into its stop.
 */
function answers(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/api/health', agent: false }, (response) => {
      response.resume().once('end', resolve).once('error', reject);
    });
    request.once('error', reject);
  });
}

/** Resolves once GET /api/health answers at all (200 or 503), or throws after the timeout. */
export async function waitForApp(port: number, timeoutMs = 60_000, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`the app exited (${child.signalCode ?? `code ${child.exitCode}`})`);
    }
    try {
      await answers(port);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`the app did not answer on 127.0.0.1:${port} within ${timeoutMs / 1000} s`);
}

/** An app a test started: its log kept for failure messages, a gentle and a hard stop. */
export type RunningApp = {
  port: number;
  url: string;
  child: ChildProcess;
  /** The app's own log so far (its last 20 kB). */
  output: () => string;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  stop: () => Promise<void>;
  /** SIGKILL: the process dies on the spot, as in a crash. */
  kill: () => Promise<void>;
};

/**
 * `next start` of the production build with its output captured, resolved once it answers (or killed, and thrown).
 * Killed when this process exits, from the moment it is started: a test whose hook timed out while the app was
 * still starting once left it running after the whole suite had ended.
 */
export async function startCapturedApp(options: { port: number; env: NodeJS.ProcessEnv }): Promise<RunningApp> {
  const child = startApp({ port: options.port, env: options.env, capture: true });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  }).then(() => {
    process.removeListener('exit', killOnExit);
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const app: RunningApp = {
    port: options.port,
    url: `http://127.0.0.1:${options.port}`,
    child,
    output: () => output,
    stop: async () => {
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await end('SIGTERM');
      clearTimeout(killer);
    },
    kill: () => end('SIGKILL'),
  };
  try {
    await waitForApp(options.port, 60_000, child);
  } catch (error) {
    await app.kill();
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return app;
}
