// Hostile test 11, a workshop room: the app configured as exposed to a network (HOST=0.0.0.0; in the test
// it still listens on loopback only) with a presenter's secret and tight rate limits. What an attendee, or a
// page of another site, must not be able to do to everyone else: change or reset the global lab, read or
// clear everyone's timeline, crash the app, read or pay another caller's order, post a form or text/plain to
// a JSON route, or flood the server with orders.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestKeyName } from '../../lib/defences/request-key/record.ts';
import { SHARED_FAULTS } from '../../lib/lab/settings.ts';
import { clientScope, signSessionId } from '../../lib/session.ts';
import {
  type Answer,
  type App,
  expectProblem,
  hostilePort,
  ownDatabase,
  rowCounts,
  SESSION_SECRET,
  send,
  startTestApp,
} from './harness.ts';
import { anyText } from './inputs.ts';

const SECRET = 'presenter-secret-for-the-room';
/** Callers of this run's own: rate counts and keys live in Redis for a minute or a day. */
const RUN = Date.now().toString(36);
let app: App | undefined;
let redis: Redis | undefined;
let savedLab: string | null = null;
let databaseUrl = '';

beforeAll(async () => {
  // The global lab settings live in a Redis database other test files of this worker use too: put back after.
  redis = new Redis(process.env.REDIS_URL ?? '');
  savedLab = await redis.get('lab:config');
  databaseUrl = await ownDatabase('payonce_hostile_room');
  app = await startTestApp({
    port: hostilePort(3137),
    databaseUrl,
    redisUrl: process.env.REDIS_URL ?? '',
    instanceName: 'hostile-room',
    env: {
      HOST: '0.0.0.0',
      LAB_SECRET: SECRET,
      RATE_LIMIT_ORDERS_PER_MINUTE: '5',
      RATE_LIMIT_PAYMENTS_PER_MINUTE: '1000',
      // The test is the room's gateway: it names each client's address in X-Forwarded-For, as nginx would.
      TRUSTED_PROXIES: '127.0.0.1',
    },
  });
});

afterAll(async () => {
  await app?.stop();
  if (savedLab === null) await redis?.del('lab:config');
  else await redis?.set('lab:config', savedLab);
  await redis?.quit();
});

const url = (path: string) => `${app?.url ?? ''}${path}`;
const json = { 'content-type': 'application/json' };
const presenter = { authorization: `Bearer ${SECRET}` };

/** A browser session of the room: the cookie the app gives a first visit (from `address`, named by the gateway). */
async function attendee(address?: string, extra: Record<string, string> = {}): Promise<string> {
  const page = await fetch(url('/'), {
    redirect: 'manual',
    headers: { ...(address ? { 'x-forwarded-for': address } : {}), ...extra },
  });
  const cookie = page.headers.getSetCookie().find((line) => /^(__Host-)?sid=/.test(line));
  expect(cookie, 'a first visit gets a session').toBeDefined();
  return (cookie ?? '').split(';')[0] ?? '';
}

describe('exposed to a room', () => {
  it('the room’s actions need the presenter’s secret; an attendee changes only their own lab', async () => {
    const patch = JSON.stringify({ layers: { stateMachine: false } });
    expectProblem(await send(url('/api/lab/config'), { method: 'PUT', headers: json, body: patch }), 401);
    expectProblem(await send(url('/api/lab/reset'), { method: 'POST' }), 401);
    expectProblem(await send(url('/api/lab/timeline'), { method: 'DELETE' }), 401);
    expectProblem(await send(url('/api/lab/timeline')), 401);
    expectProblem(await send(url('/api/lab/config?scope=global'), { method: 'PUT', headers: json, body: patch }), 401);
    const room = await send(url('/lab/room'));
    expect(room.text).toContain('Open the room');
    // Not the room's view: its counters are not drawn. (Their labels are in every page's messages, the
    // language's words for the client components, so the test looks for the rendered counter, not its label.)
    expect(room.text).not.toContain('data-testid="attendees"');
    // The same door in Chinese, for a browser that asks for it.
    const zh = await send(url('/lab/room'), { headers: { 'accept-language': 'zh-CN,zh;q=0.9' } });
    expect(zh.text).toContain('<html lang="zh-CN"');
    expect(zh.text).toContain('打开全场视图');
    expect(zh.text).not.toContain('data-testid="attendees"');

    // The presenter may; the global settings change.
    const global = await send(url('/api/lab/config'), {
      method: 'PUT',
      headers: { ...json, ...presenter },
      body: patch,
    });
    expect(global.status).toBe(200);
    expect((global.json() as { layers: { stateMachine: boolean } }).layers.stateMachine).toBe(false);
    expect((await send(url('/api/lab/reset?scope=global'), { method: 'POST', headers: presenter })).status).toBe(200);

    // An attendee's own lab: theirs to change, except the faults that stop the app for everybody.
    const cookie = await attendee();
    const mine = await send(url('/api/lab/config'), { method: 'PUT', headers: { ...json, cookie }, body: patch });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('x-lab-scope')).toBe('mine');
    // The fault that stops a process everybody uses, the receipt worker's (issue 28: an attendee once killed the
    // shared worker 19 times in 100 s with it). The app's crashes stop only the attendee's attempt (below).
    for (const fault of SHARED_FAULTS) {
      const crash = JSON.stringify({ faults: { [fault]: true } });
      expectProblem(
        await send(url('/api/lab/config'), { method: 'PUT', headers: { ...json, cookie }, body: crash }),
        401,
      );
      expectProblem(
        await send(url('/api/orders'), {
          method: 'POST',
          headers: { ...json, 'x-client-id': `mallory-${RUN}` },
          body: JSON.stringify({ lab: { faults: { [fault]: true } } }),
        }),
        401,
      );
    }
    // The global settings did not move.
    const after = await send(url('/api/lab/config?scope=global'));
    expect((after.json() as { layers: { stateMachine: boolean } }).layers.stateMachine).toBe(true);
  });

  it('another site’s page cannot post for a visitor; JSON routes take JSON only', async () => {
    const cookie = await attendee();
    const evil = { cookie, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' };
    expectProblem(await send(url('/api/lab/reset'), { method: 'POST', headers: evil }), 403);
    expectProblem(await send(url('/api/orders'), { method: 'POST', headers: { ...evil, ...json }, body: '{}' }), 403);
    const plain = { 'content-type': 'text/plain', 'x-client-id': `alice-${RUN}` };
    expectProblem(await send(url('/api/orders'), { method: 'POST', headers: plain, body: '{}' }), 415);
    expectProblem(
      await send(url('/api/payments'), {
        method: 'POST',
        headers: { ...plain, 'idempotency-key': 'k' },
        body: '{"orderNo":"ord_0000000000000000","amountCents":1}',
      }),
      415,
    );
  });

  it('an order belongs to its caller: anyone else is told it does not exist', async () => {
    expectProblem(await send(url('/api/orders'), { method: 'POST', headers: json, body: '{}' }), 400); // no caller
    const created = await send(url('/api/orders'), {
      method: 'POST',
      headers: { ...json, 'x-client-id': `alice-${RUN}` },
      body: '{}',
    });
    expect(created.status).toBe(201);
    const { orderNo } = created.json() as { orderNo: string };
    const as = (client: string) => ({ 'x-client-id': `${client}-${RUN}` });
    expect((await send(url(`/api/orders/${orderNo}`), { headers: as('alice') })).status).toBe(200);
    expectProblem(await send(url(`/api/orders/${orderNo}`), { headers: as('bob') }), 404);
    expectProblem(await send(url(`/api/tokens?orderNo=${orderNo}`), { headers: as('bob') }), 404);
    const pay = (client: string) =>
      send(url('/api/payments'), {
        method: 'POST',
        headers: { ...json, ...as(client), 'idempotency-key': `k-${client}-${orderNo}` },
        body: JSON.stringify({ orderNo, amountCents: 4200 }),
      });
    expectProblem(await pay('bob'), 404);
    expect((await send(url(`/checkout/${orderNo}`))).status).toBe(404); // a browser without the order's link
    expect((await pay('alice')).status).toBe(201);
  });

  it('order creation is limited per caller: the sixth in a minute is a 429 with Retry-After', async () => {
    const carol = `carol-${Date.now()}`; // the count lives in Redis for a minute: a name of this run's own
    const create = () =>
      send(url('/api/orders'), { method: 'POST', headers: { ...json, 'x-client-id': carol }, body: '{}' });
    for (let i = 0; i < 5; i++) expect((await create()).status).toBe(201);
    const refused = await create();
    expectProblem(refused, 429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another caller is not limited by carol.
    const dave = await send(url('/api/orders'), {
      method: 'POST',
      headers: { ...json, 'x-client-id': 'dave' },
      body: '{}',
    });
    expect(dave.status).toBe(201);
  });
});

/** An address of this run's own (IPv6's documentation range), as the room's gateway names a client. */
const anAddress = () =>
  `2001:db8:${process.pid.toString(16).slice(-4)}::${Math.floor(Math.random() * 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}`;

/** The hidden fields of a page's form whose action is posted without JavaScript (what the browser would send). */
function formFields(html: string, index = 0): Array<[string, string]> {
  const form = [...html.matchAll(/<form[^>]*>([\s\S]*?)<\/form>/g)][index]?.[1] ?? '';
  const decoded = (text: string) =>
    text
      .replace(/&quot;/g, '"')
      .replace(/&#x27;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return [...form.matchAll(/<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?\/>/g)].map(
    ([, name = '', value = '']) => [decoded(name), decoded(value)],
  );
}

/** The sign-in form of /lab/room, loaded once from `address`: posts it as a browser without JavaScript would. */
async function signInForm(
  address: string,
  extra: Record<string, string> = {},
): Promise<(secret: string) => Promise<Answer>> {
  const cookie = await attendee(address, extra);
  const page = await send(url('/lab/room'), { headers: { cookie, 'x-forwarded-for': address, ...extra } });
  const fields = formFields(page.text);
  expect(fields.length, 'the sign-in form’s hidden fields').toBeGreaterThan(0);
  return (secret) => {
    const form = new FormData();
    for (const [name, value] of fields) form.set(name, value);
    form.set('secret', secret);
    return send(url('/lab/room'), {
      method: 'POST',
      headers: { cookie, origin: url(''), 'x-forwarded-for': address, ...extra },
      body: form,
    });
  };
}

/** One sign-in from `address`. */
const signIn = async (secret: string, address: string, extra?: Record<string, string>) =>
  (await signInForm(address, extra))(secret);

/** What the sign-in form says after a post, in its words: wrong, limited, or (signed in) a redirect. */
function stateOf(answer: Answer): string | undefined {
  if (answer.status === 303) return 'signed-in';
  const said = /id="secret-error"[^>]*>([^<]*)</.exec(answer.text)?.[1] ?? '';
  if (said.startsWith('That is not the lab secret')) return 'wrong';
  return said.startsWith('Too many tries') ? 'limited' : `said “${said}”`;
}

const presenterCookieOf = (answer: Answer) =>
  answer.headers
    .getSetCookie()
    .find((line) => line.startsWith('lab_presenter='))
    ?.split(';')
    .map((part) => part.trim());

describe('what an attendee costs, and the presenter’s door (issue 28)', () => {
  it('an address pays for every caller it names: fresh X-Client-Ids and sessions stop at the address’s limit (finding 3)', async () => {
    const mallory = anAddress();
    const order = (address: string) =>
      send(url('/api/orders'), {
        method: 'POST',
        headers: { ...json, 'x-client-id': `fresh-${Math.random().toString(36).slice(2)}`, 'x-forwarded-for': address },
        body: '{}',
      });
    // 5 orders a caller, 10 callers' worth an address: 50, whoever the requests claim to be.
    const statuses = [];
    for (let i = 0; i < 51; i++) statuses.push((await order(mallory)).status);
    expect(statuses.slice(0, 50)).toEqual(Array(50).fill(201));
    const refused = await order(mallory);
    expect(expectProblem(refused, 429).detail).toMatch(/from one address/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A fresh session from that address, starting a checkout with the home page's form: refused too.
    const cookie = await attendee(mallory);
    const home = await send(url('/'), { headers: { cookie, 'x-forwarded-for': mallory } });
    const actionId = /name="\$ACTION_ID_([0-9a-f]+)"/.exec(home.text)?.[1] ?? '';
    const start = await send(url('/'), {
      method: 'POST',
      headers: {
        cookie,
        origin: url(''),
        'next-action': actionId,
        'content-type': 'text/plain',
        'x-forwarded-for': mallory,
      },
      body: '[]',
    });
    expect(start.headers.get('x-action-redirect')).toMatch(/^\/limited\?seconds=\d+/);
    // Another address is not limited by mallory's.
    expect((await order(anAddress())).status).toBe(201);
  });

  it('an unpaid order’s creation key is kept an hour, not a day (finding 3: Redis filled for free)', async () => {
    const client = `keyed-${RUN}`;
    const key = `create-${Date.now()}`;
    const created = await send(url('/api/orders'), {
      method: 'POST',
      headers: { ...json, 'x-client-id': client, 'idempotency-key': key, 'x-forwarded-for': anAddress() },
      body: '{}',
    });
    expect(created.status, created.text).toBe(201);
    const ttl = await redis?.ttl(requestKeyName(clientScope(client), key));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600);
  });

  it('a server action without a session is refused: no order nobody owns (finding 5)', async () => {
    const home = await send(url('/'));
    const actionId = /name="\$ACTION_ID_([0-9a-f]+)"/.exec(home.text)?.[1] ?? '';
    expect(actionId).not.toBe('');
    const before = await rowCounts(databaseUrl);
    for (const body of ['[]', '[null]']) {
      const answer = await send(url('/'), {
        method: 'POST',
        headers: { 'next-action': actionId, 'content-type': 'text/plain', origin: url('') },
        body,
      });
      expectProblem(answer, 400);
    }
    expect((await rowCounts(databaseUrl)).orders).toBe(before.orders);
  });

  // 200 sign-ins one after another: beside a second test run they took longer than the default minute.
  it('200 wrong sign-ins from one address are refused after the limit, the right secret too; Bearer tries count (finding 7)', {
    timeout: 180_000,
  }, async () => {
    const guesser = anAddress();
    const guess = await signInForm(guesser);
    // The limit is ten tries a minute (a window from the first): what holds however long the 200 take is each try's
    // state by when it was answered. Beside a second test run they took over a minute, and a new window let ten in.
    const started = Date.now();
    const tries: Array<{ state: string | undefined; at: number }> = [];
    const tryOne = async (secret: string) => {
      const answer = await guess(secret);
      tries.push({ state: stateOf(answer), at: Date.now() - started });
      return answer;
    };
    for (let i = 0; i < 11; i++) await tryOne(`guess-${i}-of-the-secret`);
    const right = await tryOne(SECRET);
    for (let i = 11; i < 200; i++) await tryOne(`guess-${i}-of-the-secret`);
    // Answered within a minute of the first try's sending: inside the first window.
    const firstMinute = tries.filter(({ at }) => at < 60_000).map(({ state }) => state);
    expect(firstMinute.length).toBeGreaterThan(11); // the right secret among them
    expect(firstMinute.slice(0, 10)).toEqual(Array(10).fill('wrong'));
    expect(firstMinute.slice(10)).toEqual(Array(firstMinute.length - 10).fill('limited'));
    expect(presenterCookieOf(right)).toBeUndefined();
    // Later windows: ten wrong tries at most in each, nothing else but refusals.
    const windows = 1 + Math.floor((tries.at(-1)?.at ?? 0) / 60_000);
    expect(tries.filter(({ state }) => state === 'wrong').length).toBeLessThanOrEqual(10 * windows);
    expect(tries.filter(({ state }) => state !== 'wrong' && state !== 'limited')).toEqual([]);
    // Guessing through the API's Bearer instead of the form: the same count.
    const other = anAddress();
    const bearer = (secret: string) =>
      send(url('/api/lab/reset'), {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'x-forwarded-for': other },
      });
    for (let i = 0; i < 10; i++) expectProblem(await bearer(`guess-${i}-of-the-secret`), 401);
    expectProblem(await bearer(SECRET), 401);
    // From an address that did not guess, the secret opens.
    expect(stateOf(await signIn(SECRET, anAddress()))).toBe('signed-in');
  });

  it('a presenter’s session is random, ends on the server at sign-out, and is Secure over https (finding 8)', async () => {
    const address = anAddress();
    const signedIn = await signIn(SECRET, address);
    expect(stateOf(signedIn)).toBe('signed-in');
    const attributes = presenterCookieOf(signedIn) ?? [];
    const value = (attributes[0] ?? '').replace(/^lab_presenter=/, '');
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Not the old cookie, a hash of the secret (the same for ever, and guessable offline).
    const oldToken = createHash('sha256').update(`presenter:${SECRET}`).digest('base64url');
    expect(value).not.toBe(oldToken);
    expect(attributes.map((part) => part.toLowerCase())).toEqual(
      expect.arrayContaining(['httponly', 'samesite=strict', 'path=/', `max-age=${12 * 3600}`]),
    );
    expect(attributes.map((part) => part.toLowerCase())).not.toContain('secure');
    const room = (presenter: string) =>
      send(url('/lab/room'), { headers: { cookie: `lab_presenter=${presenter}`, 'x-forwarded-for': address } });
    const open = await room(value);
    expect(open.text).toContain('data-testid="attendees"');
    expect(open.text).toContain('data-testid="redis-memory"');
    expect((await room(oldToken)).text).not.toContain('data-testid="attendees"');
    // Sign out: the room's sign-out form, posted with the session; the same cookie then opens nothing.
    const form = new FormData();
    for (const [name, field] of formFields(open.text, 0)) form.set(name, field);
    const session = await attendee(address); // exposed, a form is posted with the page's session
    const out = await send(url('/lab/room'), {
      method: 'POST',
      headers: { cookie: `lab_presenter=${value}; ${session}`, origin: url(''), 'x-forwarded-for': address },
      body: form,
    });
    expect(out.status).toBe(303);
    expect(presenterCookieOf(out)?.[0]).toBe('lab_presenter=');
    expect((await room(value)).text).not.toContain('data-testid="attendees"');
    // Over https (the room behind a TLS gateway), the cookie is Secure.
    const secure = await signIn(SECRET, anAddress(), { 'x-forwarded-proto': 'https' });
    expect(presenterCookieOf(secure)?.map((part) => part.toLowerCase())).toContain('secure');
  });

  it('a victim’s timeline shows its own lane after another session’s 500 writes (finding 2, end to end)', async () => {
    const as = async (address: string) => {
      const cookie = await attendee(address);
      const headers = { ...json, cookie, 'x-forwarded-for': address };
      const created = await send(url('/api/orders'), { method: 'POST', headers, body: '{}' });
      expect(created.status, created.text).toBe(201);
      const { orderNo } = created.json() as { orderNo: string };
      const click = () =>
        send(url('/api/lab/timeline'), {
          method: 'POST',
          headers,
          body: JSON.stringify({ orderNo, event: 'click-swallowed' }),
        });
      return { headers, orderNo, click };
    };
    const victim = await as(anAddress());
    expect((await victim.click()).status).toBe(204);
    const mallory = await as(anAddress());
    for (let i = 0; i < 50; i++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => mallory.click()));
      for (const answer of answers) expect(answer.status).toBe(204);
    }
    const seen = await send(url('/api/lab/timeline'), { headers: victim.headers });
    const orders = (seen.json() as { events: Array<{ orderNo?: string }> }).events.map((event) => event.orderNo);
    expect(orders).toContain(victim.orderNo);
    expect(orders).not.toContain(mallory.orderNo);
  });

  it('an attendee’s crash fault stops their attempt alone: the app runs on, one charge, settled later (issue 29, 8b)', async () => {
    const address = anAddress();
    const cookie = await attendee(address);
    const headers = { ...json, cookie, 'x-forwarded-for': address };
    const crash = { faults: { crashAfterCharge: true }, claims: { leaseMs: 500 } };
    const mine = await send(url('/api/lab/config'), { method: 'PUT', headers, body: JSON.stringify(crash) });
    expect(mine.status, mine.text).toBe(200);
    const created = await send(url('/api/orders'), { method: 'POST', headers, body: '{}' });
    expect(created.status, created.text).toBe(201);
    const { orderNo } = created.json() as { orderNo: string };
    const payment = { method: 'POST', headers: { ...headers, 'idempotency-key': `crash-${orderNo}` } };
    const body = JSON.stringify({ orderNo, amountCents: 4_200 });
    // Where the process would have died: no answer of the pipeline's, a 500.
    expectProblem(await send(url('/api/payments'), { ...payment, body }), 500);
    // The app runs on for everybody, and the bank has the one charge.
    expect((await send(url('/api/health'))).status).toBe(200);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const charges = async () =>
      (await db.query('SELECT 1 FROM bank_charges WHERE merchant_ref = $1', [orderNo])).rowCount ?? 0;
    try {
      expect(await charges()).toBe(1);
      // The attempt's lane ends where it crashed, after the charge.
      const steps = async () => {
        const lanes = await send(url('/api/lab/timeline'), { headers });
        return (lanes.json() as { events: Array<{ orderNo?: string; decision?: string }> }).events
          .filter((event) => event.orderNo === orderNo)
          .map((event) => event.decision);
      };
      await expect.poll(steps, { timeout: 5_000 }).toEqual(expect.arrayContaining(['charged', 'crashed']));
      // Nothing was recorded: once the lease ran out, the retry (the fault off) gets the one charge.
      const off = JSON.stringify({ faults: { crashAfterCharge: false } });
      expect((await send(url('/api/lab/config'), { method: 'PUT', headers, body: off })).status).toBe(200);
      await expect
        .poll(async () => (await send(url('/api/payments'), { ...payment, body })).status, {
          timeout: 15_000,
          interval: 250,
        })
        .toBeLessThan(300);
      expect(await charges()).toBe(1);
    } finally {
      await db.end();
    }
  });

  it('an attendee’s session ends on the server a week after its last page load (finding 8)', async () => {
    const week = 7 * 86_400;
    const now = Math.floor(Date.now() / 1000);
    const stale = `sid=${signSessionId('StaleSessionOfAWeek001', SESSION_SECRET, now - week - 60)}`;
    const headers = { ...json, cookie: stale, 'x-forwarded-for': anAddress() };
    expectProblem(await send(url('/api/orders'), { method: 'POST', headers, body: '{}' }), 400);
    const page = await send(url('/'), { headers: { cookie: stale } });
    const fresh = page.headers.getSetCookie().find((line) => line.startsWith('sid=')) ?? '';
    expect(fresh).not.toContain('StaleSessionOfAWeek001');
    // Two days old and in use: signed again with the same id, so an active session lives on.
    const used = `sid=${signSessionId('ActiveSessionTwoDays01', SESSION_SECRET, now - 2 * 86_400)}`;
    const renewed = (await send(url('/'), { headers: { cookie: used } })).headers.getSetCookie();
    expect(renewed.find((line) => line.startsWith('sid='))).toMatch(/^sid=ActiveSessionTwoDays01\./);
    const order = await send(url('/api/orders'), { method: 'POST', headers: { ...headers, cookie: used }, body: '{}' });
    expect(order.status).toBe(201);
  });
});

describe('the new pages and routes, fuzzed', () => {
  /** Percent-encodes every byte of the UTF-8 form. */
  const encoded = (text: string) =>
    [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

  it('answer anything with a 2xx, 3xx or 4xx, never a 5xx or a trace', async () => {
    const cookie = await attendee();
    await fc.assert(
      fc.asyncProperty(
        anyText,
        fc.constantFrom(
          (text: string) => `/problems/${encoded(text)}`,
          (text: string) => `/lab/room?secret=${encoded(text)}`,
          (text: string) => `/limited?seconds=${encoded(text)}`,
          (text: string) => `/api/lab/config?scope=${encoded(text)}`,
          (text: string) => `/api/lab/config?orderNo=${encoded(text)}`,
          (text: string) => `/api/lab/timeline?scope=room&after=${encoded(text)}`,
          (text: string) => `/checkout/ord_0123456789abcdef?join=${encoded(text)}`,
          (text: string) => `/api/docs?${encoded(text)}`,
        ),
        async (text, path) => {
          const answer = await send(url(path(text)), { headers: { cookie } });
          expect(answer.status, `${path(text).slice(0, 160)} → ${answer.status}`).toBeLessThan(500);
        },
      ),
      { numRuns: 120 },
    );
  });
});
