// The demo's spans reach any OTLP collector: an app started with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
// receiver in this process (OTLP/HTTP, JSON, as Jaeger's and the OpenTelemetry Collector's port 4318 take it).
// A double click is two traces, the second stopped by layer 1; a stalled attempt's claim taken over is a
// reconciler's span inside the duplicate's trace, with the takeover as an event.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_ON,
  type App,
  createOrder,
  hostilePort,
  labFor,
  ownDatabase,
  send,
  startTestApp,
  until,
} from '../hostile/harness.ts';

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
type OtlpAttribute = { key: string; value: OtlpValue };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: OtlpAttribute[];
  events?: Array<{ name: string; attributes?: OtlpAttribute[] }>;
};
type ExportRequest = {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{ scope?: { name?: string }; spans?: OtlpSpan[] }>;
  }>;
};

/** A span as received, with its scope and its attributes read flat. */
type Received = OtlpSpan & { scope: string; service: string; attrs: Record<string, string> };

const received: Received[] = [];
const flat = (attributes: OtlpAttribute[] = []) =>
  Object.fromEntries(
    attributes.map(({ key, value }) => [key, String(value.stringValue ?? value.intValue ?? value.boolValue)]),
  );

const receiver = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (request.url === '/v1/traces' && request.headers['content-type']?.includes('json')) {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const { resource, scopeSpans = [] } of body.resourceSpans ?? []) {
        const service = flat(resource?.attributes)['service.name'] ?? '';
        for (const { scope, spans = [] } of scopeSpans)
          for (const span of spans)
            received.push({ ...span, scope: scope?.name ?? '', service, attrs: flat(span.attributes) });
      }
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

let app: App | undefined;
const running = (): App => {
  if (!app) throw new Error('the app is not running');
  return app;
};

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  app = await startTestApp({
    port: hostilePort(3139),
    databaseUrl: await ownDatabase('payonce_otlp'),
    redisUrl: process.env.REDIS_URL ?? '',
    instanceName: 'otlp',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'pay-once-test' },
  });
});

afterAll(async () => {
  await app?.stop();
  await new Promise((resolve) => receiver.close(resolve));
});

function pay(orderNo: string, key: string, headers: Record<string, string> = {}) {
  return send(`${running().url}/api/payments`, {
    method: 'POST',
    headers: { 'idempotency-key': key, 'x-client-id': 'otlp-shop', ...headers },
    body: JSON.stringify({ orderNo, amountCents: 4_200 }),
  });
}

/** The spans of the payment with this X-Request-Id, once its whole trace has arrived. */
async function traceOf(requestId: string, complete: (spans: Received[]) => boolean): Promise<Received[]> {
  return until(`the trace of ${requestId}`, async () => {
    const root = received.find((span) => span.name === 'payment' && span.attrs['payonce.request_id'] === requestId);
    const spans = root ? received.filter((span) => span.traceId === root.traceId) : [];
    return root && complete(spans) ? spans : undefined;
  });
}

const eventsOf = (spans: Received[], name: string) =>
  spans.filter((span) => span.name === name).flatMap((span) => (span.events ?? []).map((event) => event.name));

describe('OpenTelemetry: the spans reach an OTLP collector', () => {
  it('a double click is two traces, the second stopped by layer 1 (its token was spent)', async () => {
    const orderNo = await createOrder(running(), { lab: labFor(ALL_ON) });
    const token = await send(`${running().url}/api/tokens?orderNo=${orderNo}`, {
      headers: { 'x-client-id': 'otlp-shop' },
    });
    const checkoutToken = (token.json() as { token: string }).token;
    // Two submits of one page: the same one-time token, a key per submit (as a form that mints one would).
    const first = await pay(orderNo, 'otlp-click-1', { 'checkout-token': checkoutToken });
    const second = await pay(orderNo, 'otlp-click-2', { 'checkout-token': checkoutToken });
    expect([first.status, second.status]).toEqual([201, 409]);

    // Complete once Next.js's request span (the trace's root, which ends last) has arrived too.
    const hasDefences = (spans: Received[]) =>
      spans.some((span) => span.name === 'defence token') && spans.some((span) => !span.parentSpanId);
    const one = await traceOf(first.headers.get('x-request-id') ?? '', hasDefences);
    const two = await traceOf(second.headers.get('x-request-id') ?? '', hasDefences);
    expect(one[0]?.traceId).not.toBe(two[0]?.traceId);
    expect(eventsOf(one, 'defence token')).toEqual(['passed']);
    expect(eventsOf(one, 'payment')).toContain('charged');
    expect(eventsOf(two, 'defence token')).toEqual(['stopped']);
    expect(eventsOf(two, 'payment')).not.toContain('charged');
    // The second never reached layer 2: layer 1 answered it.
    expect(two.some((span) => span.name === 'defence requestKey')).toBe(false);
    const payment = two.find((span) => span.name === 'payment');
    expect(payment?.attrs).toMatchObject({
      'payonce.order_no': orderNo,
      'payonce.channel': 'api',
      'payonce.outcome': 'already_submitted',
    });
    // The caller is named by a hash, never by its id.
    expect(payment?.attrs['payonce.caller']).toMatch(/^[\w-]{12}$/);
    expect(JSON.stringify(two)).not.toContain('otlp-shop');
    expect(payment?.scope).toBe('pay-once');
    expect(payment?.service).toBe('pay-once-test');
    // The route's own spans (Next.js's, the request's with the HTTP attributes) hold the payment's, in one trace.
    const parent = two.find((span) => span.spanId === payment?.parentSpanId);
    expect(parent?.scope).toBe('next.js');
    const request = two.find((span) => span.scope === 'next.js' && !span.parentSpanId);
    expect(Object.keys(request?.attrs ?? {}).filter((key) => key.startsWith('http.'))).not.toEqual([]);
  });

  it("a claim taken over: the duplicate's trace holds the reconciler's span and its takeover", async () => {
    // The first attempt stalls after its claim, past its lease; a duplicate (another key) finds the claim dead.
    const lab = { ...labFor(ALL_ON), claims: { leaseMs: 1_000 } };
    lab.faults = { ...lab.faults, stallBeforeBankMs: 3_000 };
    const orderNo = await createOrder(running(), { lab });
    const stalled = pay(orderNo, 'otlp-stall-1');
    await until('the first attempt holds the order', async () => {
      const order = await send(`${running().url}/api/orders/${orderNo}`, { headers: { 'x-client-id': 'otlp-shop' } });
      return (order.json() as { status: string }).status === 'PROCESSING' ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_300)); // past the lease
    const duplicate = await pay(orderNo, 'otlp-stall-2');
    expect(duplicate.status).toBe(201);
    expect((await stalled).status).toBe(409);

    const spans = await traceOf(duplicate.headers.get('x-request-id') ?? '', (all) =>
      all.some((span) => span.name === 'reconcile'),
    );
    const reconcile = spans.find((span) => span.name === 'reconcile');
    expect(eventsOf(spans, 'reconcile')).toEqual(['takeover', 'resumed']);
    const takeover = reconcile?.events?.find((event) => event.name === 'takeover');
    const values = flat(takeover?.attributes);
    expect(values).toMatchObject({ 'payonce.step': 'reconcile', 'payonce.reason': 'reconcileTakeover' });
    expect(Number(values['payonce.reason.fence'])).toBeGreaterThan(Number(values['payonce.reason.oldFence']));
    expect(eventsOf(spans, 'defence stateMachine')).toContain('takeover');
    expect(eventsOf(spans, 'payment')).toContain('charged');
    // The stalled attempt's own trace: it woke, found its claim lost, and never reached the bank.
    const first = await traceOf((await stalled).headers.get('x-request-id') ?? '', (all) =>
      all.some((span) => span.name === 'defence stateMachine'),
    );
    expect(eventsOf(first, 'payment')).toContain('stalled');
    expect(eventsOf(first, 'payment')).not.toContain('charged');
    expect([...eventsOf(first, 'defence stateMachine'), ...eventsOf(first, 'defence requestKey')]).toContain('lost');
  });
});
