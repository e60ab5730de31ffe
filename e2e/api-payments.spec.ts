// POST /api/payments, status code by status code: Stripe's and the IETF Idempotency-Key draft's semantics.
import { PROBLEM_TYPES } from '../lib/http/problem-types';
import { ALL_ON, chargeCount, createOrder, expect, test } from './fixtures';

const pay = (orderNo: string, amountCents = 4200) => ({ orderNo, amountCents });

test.describe('POST /api/payments', () => {
  test('Prefer: wait=10: 20 duplicates of a payment at a 5 s bank all get its 201, byte for byte, one charge', async ({
    request,
  }) => {
    // 5 s at the bank: the duplicates must land while the first runs, even on a busy machine slow to send them
    // (with 2 s, beside a second test run, some came after it had finished: a plain replay, no wait to apply).
    const orderNo = await createOrder(request, { layers: ALL_ON, faults: { bankLatencyMs: 5_000 } });
    const headers = { 'idempotency-key': `wait-${orderNo}`, 'x-client-id': `wait-${orderNo}` };
    const first = request.post('/api/payments', { headers, data: pay(orderNo) });
    await expect
      .poll(async () => (await (await request.get(`/api/orders/${orderNo}`)).json()).status, { intervals: [50] })
      .toBe('PROCESSING');
    // Without the preference, a duplicate now is told "in progress", as before.
    const told = await request.post('/api/payments', { headers, data: pay(orderNo) });
    expect(told.status()).toBe(409);
    expect(told.headers()['preference-applied']).toBeUndefined();
    const waiting = await Promise.all(
      Array.from({ length: 20 }, () =>
        request.post('/api/payments', {
          headers: { ...headers, prefer: 'wait=10' },
          data: pay(orderNo),
          timeout: 20_000,
        }),
      ),
    );
    const original = await first;
    expect(original.status()).toBe(201);
    const body = await original.text();
    for (const answer of waiting) {
      expect(answer.status()).toBe(201);
      expect(await answer.text()).toBe(body);
      expect(answer.headers()['idempotent-replayed']).toBe('true');
      expect(answer.headers()['preference-applied']).toBe('wait=10');
    }
    expect(await chargeCount(orderNo)).toBe(1);
  });

  test('201 first; the same key and body again: the same status and body, plus Idempotent-Replayed', async ({
    request,
  }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const headers = { 'idempotency-key': `k-${orderNo}`, 'x-client-id': 'shop' };
    const first = await request.post('/api/payments', { headers, data: pay(orderNo) });
    expect(first.status()).toBe(201);
    expect(first.headers()['idempotent-replayed']).toBeUndefined();
    const body = await first.json();
    expect(body).toEqual({
      status: 'PAID',
      orderNo,
      amountCents: 4200,
      chargeId: expect.stringMatching(/^ch_/),
      paidAt: expect.any(String),
    });

    const replay = await request.post('/api/payments', { headers, data: pay(orderNo) });
    expect(replay.status()).toBe(201);
    expect(replay.headers()['idempotent-replayed']).toBe('true');
    expect(await replay.text()).toBe(await first.text());
    expect(await chargeCount(orderNo)).toBe(1);
  });

  test('409 with Retry-After while the first request is still running', async ({ request }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON, faults: { bankLatencyMs: 1_500 } });
    const headers = { 'idempotency-key': `k-${orderNo}`, 'x-client-id': 'shop' };
    const first = request.post('/api/payments', { headers, data: pay(orderNo) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await request.post('/api/payments', { headers, data: pay(orderNo) });
    expect(second.status()).toBe(409);
    expect(Number(second.headers()['retry-after'])).toBeGreaterThan(0);
    expect(second.headers()['content-type']).toBe('application/problem+json');
    expect((await second.json()).title).toBe('Payment in progress');
    expect((await first).status()).toBe(201);
    expect(await chargeCount(orderNo)).toBe(1);
  });

  test('422 for the same key with a different body', async ({ request }) => {
    const [a, b] = [await createOrder(request, { layers: ALL_ON }), await createOrder(request, { layers: ALL_ON })];
    const headers = { 'idempotency-key': `k-${a}`, 'x-client-id': 'shop' };
    expect((await request.post('/api/payments', { headers, data: pay(a) })).status()).toBe(201);
    const reused = await request.post('/api/payments', { headers, data: pay(b) });
    expect(reused.status()).toBe(422);
    expect((await reused.json()).errors[0].field).toBe('Idempotency-Key');
    expect(await chargeCount(b)).toBe(0);
  });

  test('400 for a missing or malformed key, naming the header', async ({ request }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const keys: Array<Record<string, string>> = [
      {},
      { 'idempotency-key': '' },
      { 'idempotency-key': 'has space' },
      { 'idempotency-key': 'x'.repeat(256) },
    ];
    for (const headers of keys) {
      const response = await request.post('/api/payments', {
        headers: { ...headers, 'x-client-id': 'shop' },
        data: pay(orderNo),
      });
      expect(response.status()).toBe(400);
      expect(response.headers()['content-type']).toBe('application/problem+json');
      expect((await response.json()).errors[0].field).toBe('Idempotency-Key');
    }
    expect(await chargeCount(orderNo)).toBe(0);
  });

  test('404 for an unknown order', async ({ request }) => {
    const response = await request.post('/api/payments', {
      headers: { 'idempotency-key': `k-unknown-${Date.now()}`, 'x-client-id': 'shop' },
      data: pay('ord_0000000000000000'),
    });
    expect(response.status()).toBe(404);
  });

  test('400 for malformed JSON and invalid fields; 413 for an oversized body; 422 for the wrong amount', async ({
    request,
  }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const headers = { 'idempotency-key': `k-${orderNo}`, 'x-client-id': 'shop', 'content-type': 'application/json' };
    const malformed = await request.post('/api/payments', { headers, data: '{"orderNo":' });
    expect(malformed.status()).toBe(400);
    const invalid = await request.post('/api/payments', { headers, data: { orderNo, amountCents: -1 } });
    expect(invalid.status()).toBe(400);
    expect((await invalid.json()).errors.map((e: { field: string }) => e.field)).toEqual(['amountCents']);
    const huge = await request.post('/api/payments', {
      headers,
      data: { orderNo, amountCents: 4200, note: 'x'.repeat(20_000) },
    });
    expect(huge.status()).toBe(413);
    const wrong = await request.post('/api/payments', { headers, data: pay(orderNo, 1) });
    expect(wrong.status()).toBe(422);
    expect((await wrong.json()).errors[0].field).toBe('amountCents');
    expect(await chargeCount(orderNo)).toBe(0);
    // None of these used up the key: the real payment still goes through with it.
    expect((await request.post('/api/payments', { headers, data: pay(orderNo) })).status()).toBe(201);
  });

  test('402 for a declined card, replayed as 402', async ({ request }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON, faults: { bankFailure: 'decline' } });
    const headers = { 'idempotency-key': `k-${orderNo}`, 'x-client-id': 'shop' };
    const first = await request.post('/api/payments', { headers, data: pay(orderNo) });
    expect(first.status()).toBe(402);
    const replay = await request.post('/api/payments', { headers, data: pay(orderNo) });
    expect(replay.status()).toBe(402);
    expect(replay.headers()['idempotent-replayed']).toBe('true');
    expect(await replay.text()).toBe(await first.text());
    expect(await chargeCount(orderNo)).toBe(0);
  });

  test('keys are scoped per caller: another caller with the same key gets its own payment', async ({ request }) => {
    const [x, y] = [await createOrder(request, { layers: ALL_ON }), await createOrder(request, { layers: ALL_ON })];
    const alice = await request.post('/api/payments', {
      headers: { 'idempotency-key': 'shared-key', 'x-client-id': `alice-${x}` },
      data: pay(x),
    });
    const bob = await request.post('/api/payments', {
      headers: { 'idempotency-key': 'shared-key', 'x-client-id': `bob-${x}` },
      data: pay(y),
    });
    expect(alice.status()).toBe(201);
    expect(bob.status()).toBe(201);
    expect(bob.headers()['idempotent-replayed']).toBeUndefined();
    expect((await bob.json()).orderNo).toBe(y);
  });

  test('another key for an order already paid: 200 with the existing payment, no new charge', async ({ request }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const first = await request.post('/api/payments', {
      headers: { 'idempotency-key': `a-${orderNo}`, 'x-client-id': 'shop' },
      data: pay(orderNo),
    });
    const other = await request.post('/api/payments', {
      headers: { 'idempotency-key': `b-${orderNo}`, 'x-client-id': 'shop' },
      data: pay(orderNo),
    });
    expect(other.status()).toBe(200);
    expect(other.headers()['x-answered-by']).toBe('stateMachine');
    expect(await other.json()).toEqual(await first.json());
    expect(await chargeCount(orderNo)).toBe(1);
  });

  test('a Checkout-Token from GET /api/tokens is checked by layer 1 and works once', async ({ request }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const tokenResponse = await request.get(`/api/tokens?orderNo=${orderNo}`, { headers: { 'x-client-id': 'app' } });
    expect(tokenResponse.status()).toBe(200);
    const { token, expiresAt } = await tokenResponse.json();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Date(expiresAt).getTime()).toBeGreaterThan(Date.now());
    const post = (key: string, caller = 'app') =>
      request.post('/api/payments', {
        headers: { 'idempotency-key': key, 'x-client-id': caller, 'checkout-token': token },
        data: pay(orderNo),
      });
    expect((await post(`${orderNo}-1`, 'someone-else')).status()).toBe(409); // not their token
    expect((await post(`${orderNo}-2`)).status()).toBe(201);
    const reused = await post(`${orderNo}-3`);
    expect(reused.status()).toBe(409);
    expect(reused.headers()['x-answered-by']).toBe('token');
    expect(await chargeCount(orderNo)).toBe(1);
  });

  test('every path answers its retry exactly as it answered first, and says who answered', async ({ request }) => {
    const paid = await createOrder(request, { layers: ALL_ON });
    const tokened = await createOrder(request, { layers: ALL_ON });
    const caller = { 'x-client-id': 'exact' };
    // Paid once, so that another key for it is a path of its own.
    expect(
      (
        await request.post('/api/payments', { headers: { ...caller, 'idempotency-key': `a-${paid}` }, data: pay(paid) })
      ).status(),
    ).toBe(201);
    const { token } = await (await request.get(`/api/tokens?orderNo=${tokened}`, { headers: caller })).json();

    const paths: Array<{
      name: string;
      key: string;
      data: unknown;
      token?: string;
      status: number;
      replayed: boolean;
      by: string;
    }> = [
      {
        name: 'first payment',
        key: `p-${tokened}`,
        data: pay(tokened),
        token,
        status: 201,
        replayed: true,
        by: 'bank',
      },
      {
        name: 'another key on a paid order',
        key: `b-${paid}`,
        data: pay(paid),
        status: 200,
        replayed: true,
        by: 'stateMachine',
      },
      {
        name: 'the key with another amount',
        key: `a-${paid}`,
        data: pay(paid, 99),
        status: 422,
        replayed: false,
        by: 'requestKey',
      },
      {
        name: 'a wrong amount on a fresh key',
        key: `w-${paid}`,
        data: pay(paid, 99),
        status: 422,
        replayed: false,
        by: 'request',
      },
      {
        name: 'an unknown order',
        key: 'unknown-order',
        data: pay('ord_0000000000000000'),
        status: 404,
        replayed: false,
        by: 'request',
      },
      {
        name: 'an invalid body',
        key: 'invalid-body',
        data: { orderNo: 'nope' },
        status: 400,
        replayed: false,
        by: 'request',
      },
    ];
    for (const path of paths) {
      const send = () =>
        request.post('/api/payments', {
          headers: { ...caller, 'idempotency-key': path.key, ...(path.token ? { 'checkout-token': path.token } : {}) },
          data: path.data,
        });
      const first = await send();
      const retry = await send(); // the same key, the same body (and the same, now spent, token)
      const firstBody = await first.text();
      expect([first.status(), retry.status()], path.name).toEqual([path.status, path.status]);
      expect(await retry.text(), path.name).toBe(firstBody);
      expect(first.headers()['x-answered-by'], path.name).toBe(path.by);
      expect(retry.headers()['idempotent-replayed'], path.name).toBe(path.replayed ? 'true' : undefined);
      if (path.replayed) expect(retry.headers()['x-answered-by'], path.name).toBe('requestKey');
      for (const answer of [first, retry])
        expect(answer.headers()['x-request-id'], path.name).toMatch(/^[0-9a-f]{12}$/);
      expect(first.headers()['x-request-id']).not.toBe(retry.headers()['x-request-id']);
    }
    // A missing key is refused before anything else, with the same headers.
    const keyless = await request.post('/api/payments', { headers: caller, data: pay(paid) });
    expect(keyless.status()).toBe(400);
    expect(keyless.headers()).toMatchObject({
      'x-answered-by': 'request',
      'x-request-id': expect.stringMatching(/^[0-9a-f]{12}$/),
    });
    expect(await chargeCount(paid)).toBe(1);
    expect(await chargeCount(tokened)).toBe(1);
  });

  test('Idempotency-Key is an RFC 9651 String: the quoted and the bare spelling are one key', async ({ request }) => {
    const orderNo = await createOrder(request, { layers: ALL_ON });
    const post = (key: string) =>
      request.post('/api/payments', { headers: { 'idempotency-key': key, 'x-client-id': 'sf' }, data: pay(orderNo) });
    const quoted = await post(`"sf-${orderNo}"`);
    const bare = await post(`sf-${orderNo}`);
    expect([quoted.status(), bare.status()]).toEqual([201, 201]);
    expect(bare.headers()['idempotent-replayed']).toBe('true');
    expect(await bare.text()).toBe(await quoted.text());
    // A quoted key may hold spaces.
    const spaced = await createOrder(request, { layers: ALL_ON });
    const withSpaces = await request.post('/api/payments', {
      headers: { 'idempotency-key': `"order ${spaced}, attempt 1"`, 'x-client-id': 'sf' },
      data: pay(spaced),
    });
    expect(withSpaces.status()).toBe(201);
    // Malformed: 400 naming the rule.
    for (const [key, rule] of [
      ['"unterminated', 'quoted'],
      ['"k";expires=1', 'parameters'],
      ['two words', 'bare'],
    ] as const) {
      const refused = await post(key);
      expect(refused.status(), key).toBe(400);
      expect(await refused.json(), key).toMatchObject({ rule, errors: [{ field: 'Idempotency-Key' }] });
    }
    expect(await chargeCount(orderNo)).toBe(1);
  });

  test('every problem links the page that documents its type, and each page is there', async ({ request }) => {
    const missing = await request.post('/api/payments', { headers: { 'x-client-id': 'docs' }, data: {} });
    const { type } = await missing.json();
    expect(type).toBe('/problems/idempotency-key');
    expect(missing.headers().link).toBe(`<${type}>; rel="describedby"; type="text/html"`);
    for (const name of Object.keys(PROBLEM_TYPES)) {
      const page = await request.get(`/problems/${name}`);
      expect(page.status(), name).toBe(200);
      expect(await page.text(), name).toContain(PROBLEM_TYPES[name as keyof typeof PROBLEM_TYPES].status.toString());
    }
    expect((await request.get('/problems/no-such-problem')).status()).toBe(404);
  });
});
