import { expect, test } from './fixtures';

// A marker that any order written from these requests would carry in its lab settings.
const MARKER = 31_337;

test.describe('POST /api/orders', () => {
  test('creates a pending order', async ({ request }) => {
    const response = await request.post('/api/orders', { data: { amountCents: 2500 } });
    expect(response.status()).toBe(201);
    const body = await response.json();
    expect(body).toEqual({ orderNo: expect.stringMatching(/^ord_/), amountCents: 2500, status: 'PENDING' });
    expect(response.headers().location).toBe(`/api/orders/${body.orderNo}`);

    const order = await request.get(`/api/orders/${body.orderNo}`);
    expect(await order.json()).toEqual({ ...body, charges: [] });
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
