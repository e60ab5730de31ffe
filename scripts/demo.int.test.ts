// The launcher, as a user runs it: `npm run demo` with external servers, with its own embedded ones,
// with a bad configuration, and what is left running after Ctrl-C. Each runs as a terminal runs it: in a process group
// of its own, which Ctrl-C signals whole.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './lib/paths.ts';
import { until } from './lib/until.ts';

/** The launcher tests' app ports, shifted by TEST_PORT_OFFSET like every test port. */
const PORTS = {
  a: 3101 + Number(process.env.TEST_PORT_OFFSET ?? 0),
  b: 3102 + Number(process.env.TEST_PORT_OFFSET ?? 0),
};

type Launch = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

/** Every launcher started, so that one a failed test left running is stopped (with what it started) at the end. */
const launches: Launch[] = [];

function launch(extraEnv: Record<string, string | undefined>): Launch {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', ...extraEnv };
  for (const [key, value] of Object.entries(extraEnv)) if (value === undefined) delete env[key];
  const child = spawn(process.execPath, ['--conditions=react-server', '--import', 'tsx', 'scripts/demo.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // the foreground job's own process group, as a shell makes it
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const run = { child, output: () => output, exited };
  launches.push(run);
  return run;
}

async function waitForOutput(run: Launch, pattern: RegExp, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(run.output())) {
    if (Date.now() > deadline || run.child.exitCode !== null) {
      throw new Error(`launcher did not print ${pattern}; it printed:\n${run.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every process below `pid`, with its command line (Linux /proc). */
async function descendants(pid: number): Promise<Array<{ pid: number; command: string }>> {
  const children = new Map<number, number[]>();
  const commands = new Map<number, string>();
  for (const entry of await readdir('/proc')) {
    const child = Number(entry);
    if (!Number.isInteger(child)) continue;
    const stat = await readFile(`/proc/${child}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), child]);
    commands.set(child, (await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' '));
  }
  const found: Array<{ pid: number; command: string }> = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push({ pid: child, command: commands.get(child) ?? '' });
      walk(child);
    }
  };
  walk(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Ctrl-C, as a terminal sends it: SIGINT to every process of the foreground job's group at once. */
function ctrlC(run: Launch): void {
  process.kill(-(run.child.pid ?? 0), 'SIGINT');
}

/** What the launcher printed once it began to stop, from its "stopping" line on. */
function whileStopping(run: Launch): string[] {
  const lines = run.output().split('\n');
  return lines.slice(lines.findIndex((line) => /: stopping$/.test(line))).filter((line) => line !== '');
}

async function stopWithCtrlC(run: Launch): Promise<Array<{ pid: number; command: string }>> {
  const started = await descendants(run.child.pid ?? -1);
  ctrlC(run);
  expect(await run.exited).toBe(0);
  // The launcher stops what it started in order (the apps and workers, then the databases): none of them reports
  // a lost connection on the way.
  expect(whileStopping(run)).toEqual(['[demo] SIGINT: stopping', '[demo] stopped']);
  // A helper that exits a moment after the launcher (tsx's esbuild service, on a busy machine) is not left
  // running: give them up to 3 s, then report whatever is still alive.
  for (let waited = 0; waited < 3_000 && started.some((process) => alive(process.pid)); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return started.filter((process) => alive(process.pid));
}

/**
 * A page read to its end, as a browser reads it. Left unread, it held its connection busy, and the app waited for it
 * when told to stop (then killed 10 s later): the launcher's stop would wait on the test, not on itself.
 */
async function page(url: string, init?: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  await response.arrayBuffer();
  return response;
}

async function freshDatabase(name: string): Promise<string> {
  const url = new URL(process.env.DATABASE_URL ?? '');
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  url.pathname = `/${name}`;
  return url.toString();
}

const tempDirs: string[] = [];
afterAll(async () => {
  // A test that failed while its launcher was starting (a busy machine) left it running: Ctrl-C stops it and
  // everything it started; SIGKILL only if it does not stop within 20 s.
  for (const run of launches) {
    if (run.child.exitCode !== null || run.child.signalCode !== null) continue;
    ctrlC(run);
    const killer = setTimeout(() => process.kill(-(run.child.pid ?? 0), 'SIGKILL'), 20_000);
    await run.exited;
    clearTimeout(killer);
  }
  for (const dir of tempDirs) await rm(dir, { recursive: true, force: true });
}, 60_000);

describe('npm run demo', () => {
  it('stops at once with one line naming an invalid variable', async () => {
    const run = launch({ REDIS_URL: 'not-a-url' });
    expect(await run.exited).toBe(1);
    const lines = run.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/REDIS_URL: must be a URL starting with redis:\/\/ or rediss:\/\/ \(got "not-a-url"\)/);
  });

  // A start of the demo: a guard against a hang, not a measure of speed (beside a second test run it took longer
  // than the default minute).
  it('uses the servers named by DATABASE_URL and REDIS_URL and starts none of its own', {
    timeout: 180_000,
  }, async () => {
    // Its own database on the test server: the app's background reconciler must not touch other tests' orders.
    const run = launch({ PORT: String(PORTS.a), DATABASE_URL: await freshDatabase('payonce_launcher') });
    await waitForOutput(run, new RegExp(`ready: http://localhost:${PORTS.a}`));
    expect(run.output()).toContain('using the servers you configured');
    // Healthy once its first connections are made: on a busy machine the first may take longer than a probe's 1.5 s.
    const health = await until(
      'the demo to answer healthy',
      async () => {
        const response = await fetch(`http://127.0.0.1:${PORTS.a}/api/health`);
        const body: unknown = await response.json();
        return response.status === 200 ? body : undefined;
      },
      30_000,
      250,
    );
    expect(health).toEqual({ status: 'ok', redis: 'ok', database: 'ok' });

    const processes = await descendants(run.child.pid ?? -1);
    expect(processes.some((p) => /redis-server|postgres/.test(p.command))).toBe(false);
    expect(processes.some((p) => /next/.test(p.command))).toBe(true);
    expect(await stopWithCtrlC(run)).toEqual([]);
  });

  // Two starts of the demo, each with its own PostgreSQL: a guard against a hang, not a measure of speed (on a
  // machine busy with another suite a start takes over a minute; waitForOutput allows each two).
  it('starts its own PostgreSQL and Redis, keeps the data for the next run, and leaves nothing behind', {
    timeout: 360_000,
  }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'payonce-demo-'));
    tempDirs.push(dataDir);
    await chmod(dataDir, 0o755); // PostgreSQL runs as its own user and must reach its folder
    const env = {
      PORT: String(PORTS.b),
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      DATA_DIR: dataDir,
      EMBEDDED_POSTGRES_PORT: process.env.TEST_EMBEDDED_POSTGRES_PORT,
      EMBEDDED_REDIS_PORT: process.env.TEST_EMBEDDED_REDIS_PORT,
      // The demo makes its own session secret and keeps it with the data.
      SESSION_SECRET: undefined,
    };

    const first = launch(env);
    await waitForOutput(first, new RegExp(`ready: http://localhost:${PORTS.b}`));
    expect(first.output()).toMatch(/started Redis on 127\.0\.0\.1:\d+ and PostgreSQL on 127\.0\.0\.1:\d+/);
    const started = await descendants(first.child.pid ?? -1);
    expect(started.some((p) => p.command.includes('redis-server'))).toBe(true);
    expect(started.some((p) => p.command.includes('postgres'))).toBe(true);
    const created = await fetch(`http://127.0.0.1:${PORTS.b}/api/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amountCents":777}',
    });
    expect(created.status).toBe(201);
    const { orderNo } = (await created.json()) as { orderNo: string };
    const home = await page(`http://127.0.0.1:${PORTS.b}/`);
    const session = /^sid=([^;]+)/.exec(home.headers.getSetCookie()[0] ?? '')?.[1];
    expect(session, 'a session cookie').toBeDefined();
    expect(first.output()).toContain('made a session secret');
    expect((await stat(path.join(dataDir, 'demo', 'session-secret'))).mode & 0o777).toBe(0o600);
    expect(await stopWithCtrlC(first)).toEqual([]);

    const second = launch(env);
    await waitForOutput(second, new RegExp(`ready: http://localhost:${PORTS.b}`));
    const again = await fetch(`http://127.0.0.1:${PORTS.b}/api/orders/${orderNo}`);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ orderNo, amountCents: 777, status: 'PENDING' });
    // The session survives the restart: the same secret signs it (no new cookie is set).
    const kept = await page(`http://127.0.0.1:${PORTS.b}/`, { headers: { cookie: `sid=${session}` } });
    expect(kept.headers.getSetCookie()).toEqual([]);
    expect(second.output()).not.toContain('made a session secret');
    expect(await stopWithCtrlC(second)).toEqual([]);
  });
});
