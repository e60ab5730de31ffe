// Hostile test 12, the edge: the app exposed on a network, tried as an outsider would (issue 12). A session
// cookie of the client's choosing is never a session; a 10 MB body costs the server nothing; every address,
// method and form post that used to end in a 500 is a 4xx problem; every answer carries the headers that
// keep it from being framed, sniffed or run as script; and a Host the app does not serve is refused.

import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signSessionId, verifySessionCookie } from '../../lib/session.ts';
import {
  type Answer,
  type App,
  createOrder,
  expectProblem,
  hostilePort,
  ownDatabase,
  type RawRequest,
  rowCounts,
  SESSION_SECRET,
  send,
  sendRaw,
  startTestApp,
} from './harness.ts';

const APP_PORT = hostilePort(3136);
/** A name the app is told to answer to besides loopback (ALLOWED_HOSTS), on this port only. */
const ALLOWED = `workshop.example:${APP_PORT}`;

let app: App | undefined;
let databaseUrl = '';
let orderNo = '';
/** The home page's "Start a checkout" server action: a real action id, as a hand-crafted post would carry. */
let actionId = '';

const running = (): App => {
  if (!app) throw new Error('the app is not running');
  return app;
};

/** Starts the app (again): each memory measurement gets a process that has never held a large body. */
async function startApp(): Promise<App> {
  await app?.stop();
  app = await startTestApp({
    port: APP_PORT,
    databaseUrl,
    redisUrl: process.env.REDIS_URL ?? '',
    instanceName: 'hostile-edge',
    env: { ALLOWED_HOSTS: ALLOWED },
  });
  return app;
}

beforeAll(async () => {
  databaseUrl = await ownDatabase('payonce_hostile_edge');
  await startApp();
  orderNo = await createOrder(running());
  const home = await send(`${running().url}/`);
  actionId = /name="\$ACTION_ID_([0-9a-f]+)"/.exec(home.text)?.[1] ?? '';
  expect(actionId, 'the home page’s form names its action').not.toBe('');
});

afterAll(async () => {
  await app?.stop();
});

/** The value of one cookie in a response's Set-Cookie headers, with its attributes. */
function setCookie(answer: Answer, name: string): { value: string; attributes: string } | undefined {
  for (const line of answer.headers.getSetCookie()) {
    const [pair = '', ...attributes] = line.split(';');
    const at = pair.indexOf('=');
    if (pair.slice(0, at).trim() === name) return { value: pair.slice(at + 1), attributes: attributes.join(';') };
  }
  return undefined;
}

/** A request over node:http, which sends the Host header it is given (fetch always sends its own). */
const rawRequest = (options: RawRequest) => sendRaw(APP_PORT, options);

describe('sessions cannot be chosen', () => {
  const forged = () => {
    const real = signSessionId('AAAAAAAAAAAAAAAAAAAAAA', SESSION_SECRET);
    const [id = '', signature = ''] = real.split('.');
    return [
      'ATTACKERCHOSENxxxxxxxx', // the issue's finding: an unsigned id of the attacker's choosing was kept
      'ATTACKERCHOSEN', // malformed
      `${id}.${'A'.repeat(43)}`, // a signature guessed
      `B${id.slice(1)}.${signature}`, // another id under a real signature
      signSessionId('AAAAAAAAAAAAAAAAAAAAAA', 'another-secret-of-at-least-32-characters'),
    ];
  };

  it('a page replaces a chosen, forged or malformed cookie with a fresh signed one', async () => {
    for (const cookie of forged()) {
      const answer = await send(`${running().url}/checkout/${orderNo}`, { headers: { cookie: `sid=${cookie}` } });
      expect(answer.status, cookie).toBe(200);
      const fresh = setCookie(answer, 'sid');
      expect(fresh, `${cookie}: a new session`).toBeDefined();
      expect(fresh?.value).not.toBe(cookie);
      expect(verifySessionCookie(fresh?.value, SESSION_SECRET), 'signed by the server').toBeDefined();
      expect(fresh?.attributes).toMatch(/HttpOnly/i);
      expect(fresh?.attributes).toMatch(/SameSite=lax/i);
      expect(fresh?.attributes).toMatch(/Path=\//i);
    }
  });

  it('a cookie the server signed is kept', async () => {
    const first = await send(`${running().url}/`);
    const cookie = setCookie(first, 'sid')?.value ?? '';
    expect(verifySessionCookie(cookie, SESSION_SECRET), `${cookie}: signed`).toBeDefined();
    const again = await send(`${running().url}/lab`, { headers: { cookie: `sid=${cookie}` } });
    expect(again.status).toBe(200);
    expect(again.headers.getSetCookie()).toEqual([]);
  });

  it('the API takes a forged cookie for no session at all, and a signed one for its session', async () => {
    for (const cookie of forged()) {
      const answer = await send(`${running().url}/api/tokens?orderNo=${orderNo}`, {
        headers: { cookie: `sid=${cookie}` },
      });
      expect(expectProblem(answer, 400).type, cookie).toBe('/problems/missing-caller');
    }
    const signed = signSessionId('SignedByTheServer00001', SESSION_SECRET);
    const answer = await send(`${running().url}/api/tokens?orderNo=${orderNo}`, {
      headers: { cookie: `sid=${signed}` },
    });
    expect(answer.status, answer.text).toBe(200);
  });

  it('over https the cookie is __Host-sid, Secure; a plain sid cookie is not a session there', async () => {
    const plain = signSessionId('PlainHttpSession000001', SESSION_SECRET);
    const answer = await send(`${running().url}/`, {
      headers: { 'x-forwarded-proto': 'https', cookie: `sid=${plain}` },
    });
    const fresh = setCookie(answer, '__Host-sid');
    expect(fresh, 'a __Host- cookie').toBeDefined();
    expect(fresh?.attributes).toMatch(/Secure/i);
    expect(fresh?.attributes).toMatch(/Path=\//i);
    expect(fresh?.attributes).not.toMatch(/Domain/i);
    expect(setCookie(answer, 'sid')).toBeUndefined();
  });

  it('is never set on a response a cache may keep', async () => {
    for (const path of [
      '/',
      '/lab',
      '/scenarios',
      '/problems',
      '/problems/validation',
      '/api/docs',
      '/no-such-page',
      `/checkout/${orderNo}`,
    ]) {
      const answer = await send(`${running().url}${path}`);
      expect(setCookie(answer, 'sid'), `${path} gives a first visit its session`).toBeDefined();
      const cacheControl = answer.headers.get('cache-control') ?? '';
      expect(cacheControl, path).toMatch(/no-store/);
      expect(cacheControl, path).not.toMatch(/public|s-maxage/);
    }
  });
});

/** The resident memory of the app's process (Linux). */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kib) throw new Error('no VmRSS');
  return Number(kib) * 1024;
}

/**
 * The process's resident memory once it has stopped growing: three readings a second apart within 1 MB of each
 * other (at most a minute). A fresh app grows by about 60 MB in its first seconds (the work it does at start-up);
 * beside a second test run it was still growing when a fixed second's wait had passed, and that growth was counted
 * as the bodies' (58 MB against a bound of 16, twice, where the same app once steady grew by 0.5-10 MB).
 */
async function steadyResidentBytes(pid: number): Promise<number> {
  const readings = [await residentBytes(pid)];
  const deadline = Date.now() + 60_000;
  for (;;) {
    const last3 = readings.slice(-3);
    if (last3.length === 3 && Math.max(...last3) - Math.min(...last3) < 2 ** 20) return readings.at(-1) ?? 0;
    if (Date.now() > deadline) throw new Error(`the app's memory did not settle: ${readings.join(', ')} bytes`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    readings.push(await residentBytes(pid));
  }
}

const TEN_MB = 10 * 1024 * 1024;

/** A request whose body may be a stream (sent chunked, without Content-Length). */
type StreamingInit = RequestInit & { duplex?: 'half' };

/** A server action's arguments as Next.js's client sends them: none. */
function actionForm(): FormData {
  const form = new FormData();
  form.set('0', '[]');
  return form;
}

/**
 * Sends a request head announcing a 10 MB body, and all of the body but its last byte, as fast as the server
 * takes it: the body never ends, the connection is held open. Resolves once the server has closed the
 * connection, or has taken all that was sent (and a second more), with the socket (still open, unless the
 * server closed it) and the status line the server answered, if any arrived before it closed.
 */
function holdOpen(head: string): Promise<{ status?: number; closed: boolean; socket: net.Socket }> {
  return new Promise((resolve) => {
    const socket = net.connect(APP_PORT, '127.0.0.1');
    let answered = '';
    let written = 0;
    let settled = false;
    const settle = (closed: boolean) => {
      if (settled) return;
      settled = true;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answered)?.[1];
      resolve({ status: status ? Number(status) : undefined, closed, socket });
    };
    socket.on('data', (chunk: Buffer) => {
      answered += chunk.toString('latin1');
    });
    socket.on('error', () => settle(true));
    socket.on('close', () => settle(true));
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pump = () => {
      while (written < TEN_MB - 1 && !socket.destroyed) {
        const part = chunk.subarray(0, Math.min(chunk.length, TEN_MB - 1 - written));
        written += part.length;
        if (!socket.write(part)) return void socket.once('drain', pump);
      }
      if (!socket.destroyed) setTimeout(() => settle(socket.destroyed), 1_000);
    };
    socket.once('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

/**
 * Holds `count` 10 MB bodies open at once, against a freshly started app; how much its resident memory grew
 * meanwhile, in MB. Fresh: memory a process once held and freed stays resident (the allocator keeps it), and a
 * second burst would be measured against the first one's peak.
 */
async function holdMany(what: string, path: string, headers: Record<string, string>, count: number) {
  const { pid } = (await startApp()).child;
  if (pid === undefined) throw new Error('no pid');
  // Warm up with small bodies: the route's modules are loaded, nothing large was ever held.
  for (let i = 0; i < 3; i++) {
    await send(`${running().url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': `warm-${i}` },
      body: 'x'.repeat(20_000),
    });
  }
  const before = await steadyResidentBytes(pid);
  const head = (i: number) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${APP_PORT}\r\nContent-Length: ${TEN_MB}\r\n${Object.entries({
      ...headers,
      'idempotency-key': `held-${i}`,
    })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`;
  const held = await Promise.all(Array.from({ length: count }, (_, i) => holdOpen(head(i))));
  const after = await residentBytes(pid);
  for (const { socket } of held) socket.destroy();
  const grownMb = (after - before) / 1024 / 1024;
  console.log(
    `[edge] ${what}: RSS ${(before / 2 ** 20).toFixed(1)} → ${(after / 2 ** 20).toFixed(1)} MB (${grownMb.toFixed(1)} MB) with ${count} 10 MB bodies held open`,
  );
  return { grownMb, held };
}

describe('limits before work', () => {
  it('the API: ten 10 MB bodies held open cost a few MB; each is refused after 16 KiB and its connection closed', async () => {
    const { grownMb, held } = await holdMany(
      'POST /api/payments',
      '/api/payments',
      { 'content-type': 'application/json', 'x-client-id': 'holder' },
      10,
    );
    for (const { status, closed } of held) {
      expect(closed, 'the server closed the connection').toBe(true);
      // The 413 comes first; a reset may reach the client before it has read it.
      if (status !== undefined) expect(status).toBe(413);
    }
    // Refused after 16 KiB, the ten cost well under 1 MB; what the process allocates meanwhile for itself (its
    // JIT, a collection not run yet) is a few MB alone and 8 beside a second test run. Ten bodies read whole
    // would be 100 MB; two alone pass the bound.
    expect(grownMb, 'the server’s memory grew by (MB)').toBeLessThan(16);
    expect((await send(`${running().url}/api/health`)).status).toBe(200);
  }, 180_000); // its app's start, and up to a minute for its memory to settle

  it('a page: twenty 10 MB bodies held open are held to 128 KiB each (the rest is read and dropped)', async () => {
    // Next.js reads a page's body to its end before it answers the proxy's 413, so these wait (until Node's
    // request timeout, or the client gives up); of each, it keeps what next.config.ts lets the proxy see
    // (twice 128 KiB). The rest passes through 64 KiB read buffers that the collector frees in its own time
    // (V8 starts a collection when such memory outside its heap has grown by 64 MB): measured, RSS settles
    // 22-29 MB up whether 10, 20 or 30 bodies are held, and ten went 48 MB up once beside a second test run,
    // whose collector ran later. Kept whole (Next.js's default, 10 MB; proxyClientMaxBodySize raised to
    // 10 MB, measured), ten bodies went 81 MB up: twenty are held, so that bodies kept whole are well past the
    // bound and the collector's lag well within it.
    const { grownMb } = await holdMany(
      'POST /checkout/{order}',
      `/checkout/${orderNo}`,
      { 'content-type': 'multipart/form-data; boundary=x' },
      20,
    );
    expect(grownMb, 'the server’s memory grew by (MB)').toBeLessThan(96);
    expect((await send(`${running().url}/api/health`)).status).toBe(200);
  }, 180_000);

  it('a post to a page over 16 KiB is 413, announced or chunked; a small one gets the page', async () => {
    const big = 'x'.repeat(20_000);
    const streamed = (text: string) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(text));
          controller.close();
        },
      });
    for (const [what, init] of [
      ['announced, urlencoded', { body: new URLSearchParams({ big }) }],
      [
        'announced, multipart',
        {
          body: (() => {
            const f = new FormData();
            f.set('big', big);
            return f;
          })(),
        },
      ],
      [
        'chunked, urlencoded',
        { body: streamed(`big=${big}`), headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      ],
      [
        'chunked, multipart',
        {
          body: streamed(`--x\r\nContent-Disposition: form-data; name="big"\r\n\r\n${big}\r\n--x--\r\n`),
          headers: { 'content-type': 'multipart/form-data; boundary=x' },
        },
      ],
    ] as const) {
      const request: StreamingInit = { method: 'POST', duplex: 'half', ...init };
      const answer = await send(`${running().url}/lab`, request);
      expect(expectProblem(answer, 413).type, what).toBe('/problems/body-too-large');
    }
    const request: StreamingInit = {
      method: 'POST',
      body: streamed('a=1'),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      duplex: 'half',
    };
    const small = await send(`${running().url}/lab`, request);
    expect(small.status).toBe(200);
    expect(small.headers.get('content-type')).toMatch(/text\/html/);
  });
});

describe('every 500 an outsider could reach is a 4xx problem', () => {
  it('an address that is not valid percent-encoding: 400, for pages and the API', async () => {
    for (const path of [
      '/api/orders/%E0%A4%A',
      '/checkout/%E0%A4%A',
      '/api/orders/%zz',
      '/lab/%',
      '/%C0%AF',
      '/api/lab/%FF/config',
    ]) {
      const answer = await send(`${running().url}${path}`);
      expect(expectProblem(answer, 400).type, path).toBe('/problems/bad-path');
    }
  });

  it('a server action from another origin: 403, whether fetched or posted as a form', async () => {
    const before = await rowCounts(databaseUrl);
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${APP_PORT + 1}`]) {
      const fetched = await send(`${running().url}/`, {
        method: 'POST',
        headers: { 'next-action': actionId, origin },
        body: actionForm(),
      });
      expect(expectProblem(fetched, 403).type, origin).toBe('/problems/cross-origin');
      const form = new FormData();
      form.set(`$ACTION_ID_${actionId}`, '');
      const posted = await send(`${running().url}/`, { method: 'POST', headers: { origin }, body: form });
      expect(expectProblem(posted, 403).type, origin).toBe('/problems/cross-origin');
    }
    expect(await rowCounts(databaseUrl), 'no order was started').toEqual(before);
  });

  it('a server action whose body is garbage: 400', async () => {
    const before = await rowCounts(databaseUrl);
    const bodies: Array<[string, BodyInit]> = [
      ['multipart/form-data; boundary=XX', 'garbage'],
      ['multipart/form-data', '--XX\r\n'],
      ['multipart/form-data; boundary=XX', '--XX\r\nContent-Disposition: form-data; name="0"\r\n\r\n[]\r\n'],
      [
        'multipart/form-data; boundary=XX',
        '--XX\r\nContent-Disposition: form-data; name="0"\r\n\r\n{not json\r\n--XX--\r\n',
      ],
      ['text/plain;charset=UTF-8', 'garbage{'],
      ['text/plain;charset=UTF-8', ''],
      ['application/json', '\u0000'],
    ];
    for (const [contentType, body] of bodies) {
      const answer = await send(`${running().url}/lab`, {
        method: 'POST',
        headers: { 'next-action': actionId, origin: running().url, 'content-type': contentType },
        body,
      });
      expect(expectProblem(answer, 400).type, `${contentType} ${String(body).slice(0, 40)}`).toBe(
        '/problems/malformed-action',
      );
    }
    expect(await rowCounts(databaseUrl)).toEqual(before);
  });

  it('TRACE, which Next.js answered with a bare 500: 405 with the target’s Allow and a problem', async () => {
    const host = `127.0.0.1:${APP_PORT}`;
    // TRACK never reaches the app: Node's HTTP parser refuses it with a 400.
    expect((await rawRequest({ method: 'TRACK', path: '/', headers: { host } })).status).toBe(400);
    for (const method of ['TRACE']) {
      for (const [path, allow] of [
        ['/', 'GET, HEAD, POST, OPTIONS'],
        ['/lab', 'GET, HEAD, POST, OPTIONS'],
        [`/checkout/${orderNo}`, 'GET, HEAD, POST, OPTIONS'],
        ['/api/orders', 'POST, OPTIONS'],
        [`/api/orders/${orderNo}`, 'GET, HEAD, OPTIONS'],
        ['/api/payments', 'POST, OPTIONS'],
        ['/api/lab/timeline', 'GET, HEAD, POST, DELETE, OPTIONS'],
      ] as const) {
        const answer = await rawRequest({ method, path, headers: { host } });
        expect(expectProblem(answer, 405).type, `${method} ${path}`).toBe('/problems/method-not-allowed');
        expect(answer.headers.get('allow'), `${method} ${path}`).toBe(allow);
      }
    }
  });

  it('a form’s server action called with arguments of another shape: an answer, never a 5xx, nothing written', async () => {
    // The actions' ids, as the build names them (what a page's forms carry, encoded).
    const manifest = JSON.parse(
      await readFile(new URL('../../.next/server/server-reference-manifest.json', import.meta.url), 'utf8'),
    ) as { node: Record<string, { exportedName: string }> };
    const idOf = (name: string) => Object.entries(manifest.node).find(([, entry]) => entry.exportedName === name)?.[0];
    const before = await rowCounts(databaseUrl);
    for (const [name, path] of [
      ['payOrder', `/checkout/${orderNo}`],
      ['signInPresenter', '/lab/room'],
    ] as const) {
      const id = idOf(name);
      expect(id, name).toBeDefined();
      for (const body of ['[]', '[{},"x"]', '{"a":1}', '[null,null]', '[{},{}]']) {
        const answer = await send(`${running().url}${path}`, {
          method: 'POST',
          headers: { 'next-action': id ?? '', origin: running().url, 'content-type': 'text/plain;charset=UTF-8' },
          body,
        });
        expect(answer.status, `${name} ${body}`).toBeLessThan(500);
      }
    }
    expect(await rowCounts(databaseUrl)).toEqual(before);
  });

  const ROUTES: Array<{ path: string; allow: string[] }> = [
    { path: '/api/health', allow: ['GET', 'HEAD'] },
    { path: '/api/orders', allow: ['POST'] },
    { path: '/api/orders/ord_0000000000000000', allow: ['GET', 'HEAD'] },
    { path: '/api/tokens', allow: ['GET', 'HEAD'] },
    { path: '/api/payments', allow: ['POST'] },
    { path: '/api/lab/config', allow: ['GET', 'HEAD', 'PUT'] },
    { path: '/api/lab/reset', allow: ['POST'] },
    { path: '/api/lab/gateway', allow: ['GET', 'HEAD'] },
    { path: '/api/lab/timeline', allow: ['GET', 'HEAD', 'POST', 'DELETE'] },
    { path: '/api/openapi.json', allow: ['GET', 'HEAD'] },
  ];

  it('a method a route does not take: 405 with Allow and a problem; OPTIONS says what it takes', async () => {
    for (const { path, allow } of ROUTES) {
      const expected = [...allow, 'OPTIONS'].join(', ');
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !allow.includes(m))) {
        const answer = await send(`${running().url}${path}`, { method });
        expect(answer.status, `${method} ${path}`).toBe(405);
        expect(answer.headers.get('allow'), `${method} ${path}`).toBe(expected);
        if (method !== 'HEAD') expect(expectProblem(answer, 405).type).toBe('/problems/method-not-allowed');
      }
      const options = await send(`${running().url}${path}`, { method: 'OPTIONS' });
      expect(options.status, `OPTIONS ${path}`).toBe(204);
      expect(options.headers.get('allow'), `OPTIONS ${path}`).toBe(expected);
    }
  });

  it('an address the API does not have: 404 problem', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const answer = await send(`${running().url}/api/no/such/thing`, { method });
      expect(expectProblem(answer, 404).type, method).toBe('/problems/not-found');
    }
  });

  it('the timeline after the largest stream id: 400 (Redis refused it: a 500)', async () => {
    const answer = await send(`${running().url}/api/lab/timeline?after=18446744073709551615-18446744073709551615`);
    expect(expectProblem(answer, 400).errors).toEqual([{ field: 'after', message: expect.any(String) }]);
  });
});

describe('headers that keep every answer from being framed, sniffed or run', () => {
  it('pages: a Content-Security-Policy whose nonce is on every script, new on every load', async () => {
    const nonces = new Set<string>();
    for (const path of [
      '/',
      '/lab',
      '/scenarios',
      `/checkout/${orderNo}`,
      '/api/docs',
      '/problems/bad-path',
      '/no-such-page',
    ]) {
      const answer = await send(`${running().url}${path}`);
      const policy = answer.headers.get('content-security-policy') ?? '';
      expect(policy, path).toContain("frame-ancestors 'none'");
      expect(policy, path).not.toMatch(/script-src[^;]*'unsafe-inline'/);
      const nonce = /'nonce-([^']+)'/.exec(policy)?.[1] ?? '';
      expect(nonce, path).not.toBe('');
      nonces.add(nonce);
      const scripts = answer.text.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length, path).toBeGreaterThan(0);
      for (const script of scripts) expect(script, path).toContain(`nonce="${nonce}"`);
      expect(answer.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(answer.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
    expect(nonces.size).toBe(7);
  });

  it('the API and every refusal: a policy that allows nothing, nosniff, no referrer', async () => {
    const answers = [
      await send(`${running().url}/api/health`),
      await send(`${running().url}/api/orders/${orderNo}`),
      await send(`${running().url}/api/openapi.json`),
      await send(`${running().url}/api/payments`, { method: 'POST', body: '{' }),
      await send(`${running().url}/api/payments`, { method: 'DELETE' }),
      await send(`${running().url}/checkout/%E0%A4%A`),
      await send(`${running().url}/`, {
        method: 'POST',
        headers: { 'next-action': actionId, origin: 'null' },
        body: actionForm(),
      }),
    ];
    for (const answer of answers) {
      expect(answer.headers.get('content-security-policy'), answer.text.slice(0, 100)).toMatch(
        /default-src 'none'.*frame-ancestors 'none'/,
      );
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });
});

describe('a Host the app does not serve (DNS rebinding)', () => {
  it('pages and server actions answer 421, and only to loopback, HOST and ALLOWED_HOSTS', async () => {
    for (const host of [
      'attacker.example',
      `attacker.example:${APP_PORT}`,
      `workshop.example:${APP_PORT + 1}`,
      '192.168.99.99',
    ]) {
      for (const request of [
        { path: '/' },
        { path: `/checkout/${orderNo}` },
        { method: 'POST', path: '/', headers: { 'next-action': actionId, 'content-type': 'text/plain' }, body: '[]' },
      ]) {
        const answer = await rawRequest({ ...request, headers: { host, ...request.headers } });
        expect(expectProblem(answer, 421).type, `${host} ${request.path}`).toBe('/problems/host-not-allowed');
        expect(answer.headers.getSetCookie(), 'no session for it').toEqual([]);
      }
    }
    for (const host of [`localhost:${APP_PORT}`, `127.0.0.1:${APP_PORT}`, `[::1]:${APP_PORT}`, ALLOWED]) {
      const answer = await rawRequest({ path: '/', headers: { host } });
      expect(answer.status, host).toBe(200);
    }
  });
});
