// What the hostile tests share: an app of their own (the production build, `next start`, on a database of
// its own so that its reconciler and their row counts see nobody else's orders), the servers they stop
// and start, and the one check every response of the hostile run must pass: no stack trace, no secret.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { expect } from 'vitest';
import { DEFAULT_LAB_SETTINGS, type Layers } from '../../lib/lab/settings.ts';
import { freshDatabase } from '../../scripts/lib/migrations.ts';
import { nextEnv, type RunningApp, startCapturedApp } from '../../scripts/lib/next-app.ts';
import { ROOT } from '../../scripts/lib/paths.ts';
import { until as waitUntil } from '../../scripts/lib/until.ts';

export { ALL_LAYERS_OFF as ALL_OFF, ALL_LAYERS_ON as ALL_ON } from '../../lib/lab/settings.ts';

/** A port of the hostile tests' own, shifted by TEST_PORT_OFFSET (scripts/test.ts) like every test port. */
export function hostilePort(base: number): number {
  return base + Number(process.env.TEST_PORT_OFFSET ?? 0);
}
export type { Layers };

/**
 * An order's own lab settings, every field given: the global settings live in a Redis database that
 * other test files of the same vitest worker also use, so nothing is left to inherit from them.
 */
export function labFor(layers: Layers, bankLatencyMs = 0) {
  return {
    layers,
    // Every fault off but the bank's latency: a fault added to the lab is off here without a change.
    faults: { ...DEFAULT_LAB_SETTINGS.faults, bankLatencyMs },
  };
}

/**
 * The key every app of this test file signs sessions with (npm test passes one per run): an app restarted
 * mid-test keeps its sessions, and a test can sign a cookie of its own.
 */
export const SESSION_SECRET = process.env.SESSION_SECRET ?? randomBytes(32).toString('base64url');

/** A new, migrated database on the test PostgreSQL server (or on `serverUrl`). */
export function ownDatabase(name: string, serverUrl = process.env.DATABASE_URL ?? ''): Promise<string> {
  return freshDatabase(serverUrl, name);
}

export type App = RunningApp;

export async function startTestApp(options: {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  instanceName: string;
  labEnabled?: boolean;
  /** Short, so that a claim left by a killed process runs out within a test. */
  leaseMs?: number;
  /** More configuration (lib/env.ts): an exposed HOST, a LAB_SECRET, ALLOWED_HOSTS, rate limits. */
  env?: Record<string, string>;
}): Promise<App> {
  return startCapturedApp({
    port: options.port,
    env: nextEnv({
      PORT: String(options.port),
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      INSTANCE_NAME: options.instanceName,
      LAB_ENABLED: String(options.labEnabled ?? true),
      REQUEST_KEY_LEASE_MS: String(options.leaseMs ?? 3_000),
      SESSION_SECRET,
      ...options.env,
    }),
  });
}

/** Polls until `check` returns a value other than undefined; generous deadlines, never a timed assertion. */
export function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  return waitUntil(what, check, timeoutMs, 150);
}

// A stack trace or a path on the server's disk: what an error page must never show. Each alternative is
// a shape V8 and Node print ("    at fn (file:1:2)", "at async fn", the project's absolute path).
const STACK_TRACE = /\n\s+at\s|\bat (async )?[\w$.<>[\]]+ \(|\(?\/[\w./-]+\.(js|ts|tsx|mjs):\d+:\d+|node_modules\//;

/** The secret that must never leave the server: the database's user and password, as in its URL. */
function databaseCredentials(): string | undefined {
  const url = new URL(process.env.DATABASE_URL ?? 'postgresql://localhost');
  return url.password ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
}

export type Answer = { status: number; headers: Headers; text: string; json: () => unknown };

/**
 * Every request of the hostile run goes through here: the answer is read whole and checked for a stack
 * trace, the server's file paths and the database password, in its body and in every header.
 */
export async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  // A body is JSON unless the test says otherwise (fetch would call a string text/plain, which the API refuses).
  const headers = new Headers(init.headers);
  if (typeof init.body === 'string' && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const response = await fetch(url, {
    ...init,
    headers,
    redirect: 'manual',
    signal: init.signal ?? AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  expectNoLeak(`${init.method ?? 'GET'} ${url.slice(0, 200)} → ${response.status}`, response.headers, text);
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: () => JSON.parse(text),
  };
}

/**
 * A body streamed in chunks of 4 KiB (Transfer-Encoding: chunked, no length announced), handed to the socket at once,
 * and its answer read as soon as the server gives one. The app answers a body over its limit 413 and closes the
 * connection without reading the rest (RFC 9112, section 9.6). fetch streams a body a chunk at a time: on a busy
 * machine it was still writing when the connection closed, failed on the write (EPIPE) and dropped the 413 it had been
 * sent, which made a refusal look like no answer. Here every chunk is written before the server answers, and an error
 * after the answer (the close) is not the answer's.
 */
export function sendStreamed(
  url: string,
  init: { method: string; headers: Record<string, string>; body: string },
): Promise<Answer> {
  const bytes = Buffer.from(init.body);
  return new Promise<Answer>((resolve, reject) => {
    // Chunked even when empty (Node would announce Content-Length: 0 for a body it was never given).
    const headers = { ...init.headers, 'transfer-encoding': 'chunked' };
    const request = http.request(url, { method: init.method, headers, timeout: 30_000 });
    let answered = false;
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        settle(resolve, reject, () =>
          answerOf(`${init.method} ${url.slice(0, 200)}`, response.statusCode ?? 0, response.headers, text),
        );
      });
    });
    request.on('timeout', () => request.destroy(new Error(`${init.method} ${url}: no answer within 30 s`)));
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    for (let at = 0; at < bytes.length; at += 4_096) request.write(bytes.subarray(at, at + 4_096));
    request.end();
  });
}

/** No stack trace, no path on the server's disk, no database password: in any header or the body. */
export function expectNoLeak(what: string, headers: Headers, text: string): void {
  const all = `${[...headers].map(([name, value]) => `${name}: ${value}`).join('\n')}\n\n${text}`;
  const credentials = databaseCredentials();
  if (credentials) expect(all.includes(credentials), `${what}: carries the database password`).toBe(false);
  expect(all.includes(ROOT), `${what}: carries a path on the server's disk`).toBe(false);
  expect(STACK_TRACE.test(text), `${what}: carries a stack trace:\n${text.slice(0, 2_000)}`).toBe(false);
}

/** Resolves with what `make` returns, or rejects with what it throws (a failed check inside an event listener). */
function settle<T>(resolve: (value: T) => void, reject: (error: unknown) => void, make: () => T): void {
  try {
    resolve(make());
  } catch (error) {
    reject(error);
  }
}

/** An answer node:http read, checked as every answer of the hostile run is. */
function answerOf(what: string, status: number, rawHeaders: http.IncomingHttpHeaders, text: string): Answer {
  const headers = new Headers();
  for (const [name, value] of Object.entries(rawHeaders)) {
    for (const one of [value ?? []].flat()) headers.append(name, one);
  }
  expectNoLeak(`${what} → ${status}`, headers, text);
  return { status, headers, text, json: () => JSON.parse(text) };
}

export type RawRequest = { method?: string; path: string; headers: Record<string, string>; body?: string };

/**
 * A request over node:http, which sends the Host header and the method it is given (fetch sends its own Host,
 * and refuses TRACE and CONNECT). CONNECT's answer comes as Node's `connect` event: read the same way.
 */
export function sendRaw(port: number, options: RawRequest): Promise<Answer> {
  const method = options.method ?? 'GET';
  return new Promise<Answer>((resolve, reject) => {
    const answer = (status: number, rawHeaders: http.IncomingHttpHeaders, text: string) =>
      settle(resolve, reject, () => answerOf(`${method} ${options.path}`, status, rawHeaders, text));
    const request = http.request(
      { host: '127.0.0.1', port, method, path: options.path, headers: options.headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => answer(response.statusCode ?? 0, response.headers, Buffer.concat(chunks).toString()));
      },
    );
    request.on('connect', (response, socket, head) => {
      const chunks: Buffer[] = [head];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => answer(response.statusCode ?? 0, response.headers, Buffer.concat(chunks).toString()));
      socket.on('error', reject);
    });
    request.on('error', reject);
    request.setTimeout(30_000, () => request.destroy(new Error('timed out')));
    request.end(options.body);
  });
}

/** An RFC 9457 problem: its status, its content type, and (for the tests' messages) its body. */
export function expectProblem(answer: Answer, status: number): Record<string, unknown> {
  expect(answer.status, answer.text.slice(0, 500)).toBe(status);
  expect(answer.headers.get('content-type')).toBe('application/problem+json');
  const body = answer.json() as Record<string, unknown>;
  expect(body).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
  return body;
}

export const TABLES = ['orders', 'bank_charges', 'idempotent_record', 'outbox', 'receipts'] as const;

/** Every row of the tables a request could write, per table. */
export async function rowCounts(databaseUrl: string): Promise<Record<(typeof TABLES)[number], number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const counts = {} as Record<(typeof TABLES)[number], number>;
    for (const table of TABLES) {
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      counts[table] = rows[0]?.n ?? 0;
    }
    return counts;
  } finally {
    await client.end();
  }
}

/** What the card network recorded for the order: the number the customer cares about. */
export async function chargesOf(databaseUrl: string, orderNo: string): Promise<Array<{ id: string }>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(
      'SELECT id FROM bank_charges WHERE merchant_ref = $1 ORDER BY created_at, id',
      [orderNo],
    );
    return rows;
  } finally {
    await client.end();
  }
}

/** POST /api/orders with the order's own lab settings (or none); returns the order number. */
export async function createOrder(app: App, body: Record<string, unknown> = {}): Promise<string> {
  const answer = await send(`${app.url}/api/orders`, { method: 'POST', body: JSON.stringify(body) });
  expect(answer.status, answer.text).toBe(201);
  return (answer.json() as { orderNo: string }).orderNo;
}

/** POST /api/payments as a service: the order's amount, the caller's key. */
export function payByApi(
  app: App,
  orderNo: string,
  idempotencyKey: string,
  options: { clientId?: string; amountCents?: number } = {},
): Promise<Answer> {
  return send(`${app.url}/api/payments`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
      'x-client-id': options.clientId ?? 'hostile-shop',
    },
    body: JSON.stringify({ orderNo, amountCents: options.amountCents ?? 4_200 }),
  });
}
