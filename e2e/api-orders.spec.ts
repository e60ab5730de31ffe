import { expect, test } from './fixtures';

// A marker that any order written from these requests would carry in its lab settings.
const MARKER = 31_337;

test.describe('POST /api/orders', () => {
  test('creates a pending order', async ({ request }) => {
    const response = await request.post('/api/orders', { data: { amountCents: 2500 } });
    expect(response.status()).toBe(201);
    const body = await response.json();
    expect(body).toEqual({
      orderNo: expect.stringMatching(/^ord_/),
      amountCents: 2500,
      status: 'PENDING',
      checkoutUrl: `/checkout/${body.orderNo}`, // no caller named: an open order, and no join code
    });
    expect(response.headers().location).toBe(`/api/orders/${body.orderNo}`);

    const order = await request.get(`/api/orders/${body.orderNo}`);
    const { checkoutUrl: _, ...summary } = body;
    expect(await order.json()).toEqual({ ...summary, charges: [], refunds: [], refundedCents: 0 });
  });

  for (const [name, payload, field] of [
    ['a negative amount', `{"amountCents":-5,"lab":{"faults":{"bankLatencyMs":${MARKER}}}}`, 'amountCents'],
    ['a string amount', `{"amountCents":"12","lab":{"faults":{"bankLatencyMs":${MARKER}}}}`, 'amountCents'],
    ['malformed JSON', `{"amountCents":5,"lab":{"faults":{"bankLatencyMs":${MARKER}}}`, '(body)'],
    ['an unknown field', `{"amountCents":5,"amount":5,"lab":{"faults":{"bankLatencyMs":${MARKER}}}}`, 'amount'],
  ] as const) {
    test(`answers 400 problem+json naming the field for ${name}, and writes nothing`, async ({ request, db }) => {
      const response = await request.post('/api/orders', {
        data: payload,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status()).toBe(400);
      expect(response.headers()['content-type']).toBe('application/problem+json');
      const problem = await response.json();
      expect(problem).toMatchObject({
        status: 400,
        title: expect.any(String),
        type: expect.stringContaining('/problems/'),
      });
      expect(problem.errors.map((error: { field: string }) => error.field)).toContain(field);
      expect(JSON.stringify(problem)).not.toMatch(/\bat .*\.(js|ts):\d+/); // no stack trace

      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM orders WHERE (lab->'faults'->>'bankLatencyMs')::int = $1`,
        [MARKER],
      );
      expect(rows[0].n).toBe(0);
    });
  }

  test('with an Idempotency-Key, a retry gets the first order back: one order, the same bytes', async ({
    request,
    db,
  }) => {
    const key = `order-${Date.now()}-${Math.random()}`;
    const headers = { 'idempotency-key': key, 'x-client-id': 'shop' };
    const data = { amountCents: 1234, lab: { faults: { bankLatencyMs: MARKER + 1 } } };
    const first = await request.post('/api/orders', { headers, data });
    const retry = await request.post('/api/orders', { headers, data });
    expect([first.status(), retry.status()]).toEqual([201, 201]);
    expect(await retry.text()).toBe(await first.text());
    expect(retry.headers()['idempotent-replayed']).toBe('true');
    expect(retry.headers().location).toBe(first.headers().location);
    // The same key, quoted (RFC 9651): the same key.
    const quoted = await request.post('/api/orders', { headers: { ...headers, 'idempotency-key': `"${key}"` }, data });
    expect(await quoted.text()).toBe(await first.text());
    const { rows } = await db.query('SELECT count(*)::int AS n FROM orders WHERE amount_cents = 1234 AND lab = $1', [
      JSON.stringify(data.lab),
    ]);
    expect(rows[0].n).toBe(1);

    // Another body with the key: 422. The key on another endpoint: 422 that says which.
    const other = await request.post('/api/orders', { headers, data: { amountCents: 999 } });
    expect(other.status()).toBe(422);
    const { orderNo } = await first.json();
    const onPayments = await request.post('/api/payments', { headers, data: { orderNo, amountCents: 1234 } });
    expect(onPayments.status()).toBe(422);
    expect((await onPayments.json()).detail).toContain('was first used on POST /api/orders');
    // Without a key, every POST is a new order (the key is optional here).
    const a = await request.post('/api/orders', { data: { amountCents: 1234 } });
    const b = await request.post('/api/orders', { data: { amountCents: 1234 } });
    expect((await a.json()).orderNo).not.toBe((await b.json()).orderNo);
  });

  test('a keyed order needs a caller and a well-formed key', async ({ request }) => {
    const noCaller = await request.post('/api/orders', { headers: { 'idempotency-key': 'k' }, data: {} });
    expect(noCaller.status()).toBe(400);
    expect((await noCaller.json()).errors[0].field).toBe('X-Client-Id');
    const bad = await request.post('/api/orders', {
      headers: { 'idempotency-key': '"k";x=1', 'x-client-id': 'shop' },
      data: {},
    });
    expect(bad.status()).toBe(400);
    expect(await bad.json()).toMatchObject({ rule: 'parameters', errors: [{ field: 'Idempotency-Key' }] });
  });

  test('GET of an unknown order is a 404 problem', async ({ request }) => {
    const response = await request.get('/api/orders/ord_0000000000000000');
    expect(response.status()).toBe(404);
    expect(response.headers()['content-type']).toBe('application/problem+json');
  });
});

test('GET /api/health reports both services', async ({ request }) => {
  const response = await request.get('/api/health');
  expect(response.status()).toBe(200);
  expect(await response.json()).toEqual({ status: 'ok', redis: 'ok', database: 'ok' });
});
