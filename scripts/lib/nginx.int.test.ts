// The cluster's gateway, nginx itself (not the app): two small upstream servers stand in for the instances, one
// slow or gone, so that what the generated configuration does is seen alone: a POST that timed out is sent
// to the other instance, the log draws each attempt, and a reload with no retry answers 504 instead.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Nginx, nginxAt } from './nginx.ts';
import type { AccessLogEntry } from './nginx-log.ts';
import { gatewayLane } from './nginx-log.ts';
import { ensureProgram, NGINX } from './system-programs.ts';

const offset = Number(process.env.TEST_PORT_OFFSET ?? 0);
const PORTS = { gateway: 3160 + offset, a: 3161 + offset, b: 3162 + offset };
const upstreams = [
  { name: 'a', port: PORTS.a },
  { name: 'b', port: PORTS.b },
];
const ORDER = 'ord_0123456789abcdef';

type Instance = { server: http.Server; posts: number; delayMs: number };
const instances: Record<'a' | 'b', Instance> = {
  a: { server: http.createServer(), posts: 0, delayMs: 0 },
  b: { server: http.createServer(), posts: 0, delayMs: 0 },
};

function listen(name: 'a' | 'b'): Promise<void> {
  const instance = instances[name];
  instance.server = http.createServer((req, res) => {
    if (req.method === 'POST') instance.posts += 1;
    req.resume();
    const timer = setTimeout(() => res.writeHead(201, { 'content-type': 'text/plain' }).end(name), instance.delayMs);
    res.on('close', () => clearTimeout(timer));
  });
  instance.server.listen(instances[name] === instances.a ? PORTS.a : PORTS.b, '127.0.0.1');
  return once(instance.server, 'listening').then(() => undefined);
}

let nginx: Nginx;
let child: ReturnType<Nginx['spawn']>;
let prefix: string;
const logged: AccessLogEntry[] = [];
let unfollow: () => void;

type Answer = { status: number; header: (name: string) => string; text: string };

/** One POST through the gateway, first to instance a; resolves once nginx has logged it. */
async function pay(): Promise<Answer> {
  const before = logged.length;
  // A connection of its own (no keep-alive): a reload retires the workers that held the old ones.
  const answer = await new Promise<Answer>((resolve, reject) => {
    const request = http.request(
      `http://127.0.0.1:${PORTS.gateway}/api/payments`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-gateway-route': 'a' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, header: (name) => String(response.headers[name] ?? ''), text }),
        );
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ orderNo: ORDER, amountCents: 4200 }));
  });
  await expect.poll(() => logged.length, { timeout: 5_000, interval: 50 }).toBeGreaterThan(before);
  return answer;
}

beforeAll(async () => {
  const binary = ensureProgram(NGINX, () => {});
  prefix = mkdtempSync(path.join(tmpdir(), 'pay-once-nginx-'));
  await Promise.all([listen('a'), listen('b')]);
  nginx = nginxAt(binary, { prefix, port: PORTS.gateway, upstreams }, { timeoutMs: 300, retries: 1 });
  child = nginx.spawn();
  unfollow = nginx.follow((entry) => logged.push(entry));
  // nginx is up once it answers (the GET goes to instance a, which answers at once).
  for (let waited = 0; ; waited += 50) {
    const status = await fetch(`http://127.0.0.1:${PORTS.gateway}/`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 201) break;
    if (waited > 10_000 || child.exitCode !== null) throw new Error(`nginx did not start (${child.exitCode})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});

afterAll(async () => {
  unfollow?.();
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  for (const instance of Object.values(instances)) instance.server.close();
  rmSync(prefix, { recursive: true, force: true });
});

describe('nginx as the cluster’s gateway', () => {
  it('sends a POST that timed out on one instance to the other: both got it', async () => {
    instances.a.delayMs = 1_000;
    instances.a.posts = 0;
    instances.b.posts = 0;
    const response = await pay();
    expect(response.status).toBe(201);
    expect(response.text).toBe('b');
    expect(response.header('server')).toMatch(/^nginx/);
    expect([instances.a.posts, instances.b.posts]).toEqual([1, 1]);
    const lane = gatewayLane(logged.at(-1) as AccessLogEntry, upstreams, 300);
    expect(lane.map((event) => [event.instance, event.decision])).toEqual([
      ['a', 'timeout'],
      ['b', 'answered'],
    ]);
    expect(lane[0]?.orderNo).toBe(ORDER);
  });

  it('moves on from a dead instance at once (a failed connection)', async () => {
    await new Promise((resolve) => instances.a.server.close(resolve));
    instances.b.posts = 0;
    const response = await pay();
    expect(response.status).toBe(201);
    expect(instances.b.posts).toBe(1);
    const lane = gatewayLane(logged.at(-1) as AccessLogEntry, upstreams, 300);
    expect(lane.map((event) => [event.instance, event.decision])).toEqual([
      ['a', 'failed'],
      ['b', 'answered'],
    ]);
    await listen('a');
  });

  it('reloaded with no retry, answers the caller 504 (a problem) and never sends it twice', async () => {
    await nginx.apply({ timeoutMs: 300, retries: 0 });
    expect(nginx.config()).toContain('proxy_next_upstream_tries 1;');
    instances.a.delayMs = 1_000;
    instances.a.posts = 0;
    instances.b.posts = 0;
    const response = await pay();
    expect([response.status, response.header('content-type'), response.header('retry-after')]).toEqual([
      504,
      'application/problem+json',
      '1',
    ]);
    expect(instances.b.posts).toBe(0);
    const lane = gatewayLane(logged.at(-1) as AccessLogEntry, upstreams, 300);
    expect(lane.map((event) => [event.instance, event.decision])).toEqual([['a', 'timeout']]);
  });

  it('refuses a configuration nginx would not run, and keeps running the last good one', async () => {
    await expect(nginx.apply({ timeoutMs: 300, retries: -5 })).rejects.toThrow(/refused/);
    expect(nginx.config()).toContain('proxy_next_upstream_tries 1;');
  });
});
