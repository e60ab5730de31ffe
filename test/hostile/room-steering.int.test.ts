// The room steered by its presenter (issue 29), with three attendees and the app exposed (HOST=0.0.0.0, a lab
// secret): "Set up exercise 1 for everyone" moves every attendee who follows the room and tells the one who
// changed their own lab, who may follow; the progress view reads who saw the double charge, switched the fix on
// and then paid once; the room's reset clears it. Only the presenter may steer.
import { chromium } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXERCISES, exerciseSettings, findExercise } from '../../lib/lab/exercises.ts';
import { CHROMIUM, CHROMIUM_HEADLESS_SHELL, ensureEither } from '../../scripts/lib/system-programs.ts';
import { type App, expectProblem, hostilePort, ownDatabase, send, startTestApp } from './harness.ts';

const SECRET = 'presenter-secret-for-the-steered-room';
let app: App | undefined;

beforeAll(async () => {
  app = await startTestApp({
    port: hostilePort(3140),
    databaseUrl: await ownDatabase('payonce_hostile_steering'),
    redisUrl: process.env.REDIS_URL ?? '',
    instanceName: 'hostile-steering',
    env: {
      HOST: '0.0.0.0',
      LAB_SECRET: SECRET,
      RATE_LIMIT_ORDERS_PER_MINUTE: '100',
      RATE_LIMIT_PAYMENTS_PER_MINUTE: '1000',
    },
  });
});
afterAll(async () => {
  await app?.stop();
});

const url = (path: string) => `${app?.url ?? ''}${path}`;
const json = { 'content-type': 'application/json' };
const presenter = { authorization: `Bearer ${SECRET}` };

async function attendee(): Promise<Record<string, string>> {
  const page = await fetch(url('/'), { redirect: 'manual' });
  const cookie = page.headers.getSetCookie().find((line) => /^(__Host-)?sid=/.test(line));
  expect(cookie).toBeDefined();
  return { ...json, cookie: (cookie ?? '').split(';')[0] ?? '' };
}

const labOf = async (headers: Record<string, string>) => {
  const answer = await send(url('/api/lab/config'), { headers });
  expect(answer.status).toBe(200);
  return {
    settings: answer.json(),
    follows: answer.headers.get('x-lab-follows-room'),
    exercise: answer.headers.get('x-lab-room-exercise'),
  };
};

/** One order of this attendee's, paid by `keys.length` payments at once (one Idempotency-Key each). */
async function payOrder(headers: Record<string, string>, keys: string[]): Promise<string> {
  const created = await send(url('/api/orders'), { method: 'POST', headers, body: '{}' });
  expect(created.status, created.text).toBe(201);
  const { orderNo } = created.json() as { orderNo: string };
  const body = JSON.stringify({ orderNo, amountCents: 4_200 });
  await Promise.all(
    keys.map((key) =>
      send(url('/api/payments'), {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': `${key}-${orderNo}` },
        body,
      }),
    ),
  );
  return orderNo;
}

/** The room page's progress table: one row per attendee, its three cells. */
async function progress(): Promise<string[][]> {
  const page = await send(url('/lab/room'), { headers: presenter });
  expect(page.status).toBe(200);
  const table = /<table[^>]*data-testid="room-progress"[\s\S]*?<\/table>/.exec(page.text)?.[0] ?? '';
  return [...table.matchAll(/<tr data-attendee[^>]*>([\s\S]*?)<\/tr>/g)].map(([, row]) =>
    [...(row ?? '').matchAll(/<td>([^<]*)<\/td>/g)].map(([, cell]) => cell ?? ''),
  );
}

describe('the presenter steers the room', () => {
  it('sets an exercise up for everyone, tells who changed their own lab, reads the progress, and resets', async () => {
    const [a, b, c] = [await attendee(), await attendee(), await attendee()];
    // B changed their own lab before the presenter's exercise.
    const own = await send(url('/api/lab/config'), { method: 'PUT', headers: b, body: '{"layers":{"bankKey":false}}' });
    expect(own.status).toBe(200);

    // Only the presenter steers; a bad exercise is a 400 naming the field.
    const body = JSON.stringify({ exercise: '1' });
    expectProblem(await send(url('/api/lab/room/exercise'), { method: 'POST', headers: a, body }), 401);
    expectProblem(await send(url('/api/lab/room/reset'), { method: 'POST', headers: a }), 401);
    const bad = expectProblem(
      await send(url('/api/lab/room/exercise'), {
        method: 'POST',
        headers: { ...json, ...presenter },
        body: '{"exercise":"99"}',
      }),
      400,
    );
    expect(JSON.stringify(bad)).toContain('exercise');

    const set = await send(url('/api/lab/room/exercise'), { method: 'POST', headers: { ...json, ...presenter }, body });
    expect(set.status, set.text).toBe(200);
    const preset = exerciseSettings(findExercise('1') ?? (undefined as never));
    // A and C follow the room: moved at once. B is told, and follows.
    expect(await labOf(a)).toEqual({ settings: preset, follows: 'yes', exercise: '1' });
    const told = await labOf(b);
    expect(told).toMatchObject({ follows: 'no', exercise: '1' });
    expect(told.settings).not.toEqual(preset);
    const followed = await send(url('/api/lab/follow'), { method: 'POST', headers: b });
    expect(followed.status).toBe(200);
    expect(await labOf(b)).toEqual({ settings: preset, follows: 'yes', exercise: '1' });

    // C plays exercise 1: a double charge (every defence off), the fix (the pending UI) on, then one charge.
    await payOrder(c, ['first', 'second']);
    expect(await progress()).toEqual([['yes', 'no', 'no']]);
    const fix = await send(url('/api/lab/config'), {
      method: 'PUT',
      headers: c,
      body: '{"layers":{"pendingUi":true}}',
    });
    expect(fix.status).toBe(200);
    await payOrder(c, ['once']);
    expect(await progress()).toEqual([['yes', 'yes', 'yes']]); // A and B paid nothing: not listed

    // The room's reset: no exercise, the global lab all on, the progress and double charges from now.
    expect((await send(url('/api/lab/room/reset'), { method: 'POST', headers: presenter })).status).toBe(204);
    expect((await send(url('/api/lab/room/exercise'))).json()).toEqual({ exercise: null });
    const global = await send(url('/api/lab/config?scope=global'), { headers: presenter });
    expect((global.json() as { layers: Record<string, boolean> }).layers).toEqual(
      expect.objectContaining({ token: true, requestKey: true, stateMachine: true, bankKey: true }),
    );
    expect(await progress()).toEqual([]);
    const room = await send(url('/lab/room'), { headers: presenter });
    expect(/data-testid="double-charges">(\d+)</.exec(room.text)?.[1]).toBe('0');
  });
});

// The attendee's side of it, in a browser: the lab that changed its own switches is told the presenter's
// exercise with a button to follow, and the button moves it; a lab that follows says so (issue 29).
describe('an attendee’s lab page while the presenter steers', () => {
  it('tells the attendee with their own changes, whose button follows the room', async () => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || ensureEither(CHROMIUM_HEADLESS_SHELL, CHROMIUM, console.log),
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(url('/lab')); // the attendee's session cookie
      const own = await page.request.put(url('/api/lab/config'), { data: { layers: { bankKey: false } } });
      expect(own.status()).toBe(200);
      const body = JSON.stringify({ exercise: '2' });
      const set = await send(url('/api/lab/room/exercise'), {
        method: 'POST',
        headers: { ...json, ...presenter },
        body,
      });
      expect(set.status, set.text).toBe(200);
      const notice = page.getByTestId('room-notice');
      const follows = () => notice.getAttribute('data-follows', { timeout: 1_000 }).catch(() => 'absent');
      await expect.poll(follows, { timeout: 10_000 }).toBe('no');
      expect(await notice.textContent()).toContain('your lab keeps your own changes');
      await page.getByRole('button', { name: 'Follow the room (exercise 2)' }).click();
      await expect.poll(follows, { timeout: 10_000 }).toBe('yes');
      expect(await notice.textContent()).toContain('Following the room: the presenter set up exercise 2');
      const lab = await page.request.get(url('/api/lab/config'));
      expect(await lab.json()).toEqual(exerciseSettings(findExercise('2') ?? (undefined as never)));
    } finally {
      await browser.close();
      await send(url('/api/lab/room/reset'), { method: 'POST', headers: presenter });
    }
  });
});

// Issue 29: every exercise marked for attendees is set up from an attendee's own lab in a room, with no
// presenter action: its preset is accepted (no fault of it is the presenter's), the attendee's orders run under
// it, and another attendee's do not.
describe('every attendee’s exercise, from their own lab in a room', () => {
  for (const exercise of EXERCISES.filter((e) => e.audience !== 'presenter')) {
    it(`exercise ${exercise.id}`, async () => {
      const [player, neighbour] = [await attendee(), await attendee()];
      const preset = exerciseSettings(exercise);
      const set = await send(url('/api/lab/config'), { method: 'PUT', headers: player, body: JSON.stringify(preset) });
      expect(set.status, set.text).toBe(200);
      expect(set.json()).toEqual(preset);
      const orderOf = async (headers: Record<string, string>) => {
        const created = await send(url('/api/orders'), { method: 'POST', headers, body: '{}' });
        expect(created.status, created.text).toBe(201);
        const { orderNo } = created.json() as { orderNo: string };
        return (await send(url(`/api/lab/config?orderNo=${orderNo}`), { headers })).json();
      };
      expect(await orderOf(player)).toEqual(preset);
      expect(await orderOf(neighbour)).toEqual((await labOf(neighbour)).settings);
      expect((await labOf(neighbour)).settings).not.toEqual(preset);
    });
  }
});
