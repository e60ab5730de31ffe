// The API reference checked against the running API: every documented example is sent, and the answer must
// have the status the example documents, a body that validates against that status's documented schema
// (Ajv, JSON Schema 2020-12, as OpenAPI 3.1 uses), and every header the document marks required.
// The lab's state-changing operations (PUT config, reset, DELETE timeline) are left out: they would change
// the global settings and the timeline other specs running in parallel rely on; lab-page.spec.ts and the
// hostile room test cover them.
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { EXAMPLE_ORDER_NO } from '../lib/http/api-schemas';
import { ALL_ON, createOrder, expect, test } from './fixtures';

type Json = Record<string, unknown>;
type Parameter = { name: string; in: string; required?: boolean; examples?: Record<string, Example> };
type Example = { summary?: string; value: unknown; 'x-status': number; 'x-given'?: 'paid' };
type Exchange = { method: string; path: string; name: string; example?: Example; parameter?: Parameter };

const SKIPPED = new Set(['put /api/lab/config', 'post /api/lab/reset', 'delete /api/lab/timeline']);

test('every documented example gets its documented status, body and headers', async ({ request }) => {
  const served = await (await request.get('/api/openapi.json')).json();
  const document = (await SwaggerParser.dereference(served)) as unknown as {
    paths: Record<string, Record<string, Json>>;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);

  const exchanges: Exchange[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (SKIPPED.has(`${method} ${path}`)) continue;
      const parameters = (operation.parameters ?? []) as Parameter[];
      const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
      const bodyExamples = Object.entries((content['application/json']?.examples ?? {}) as Record<string, Example>);
      const parameter = parameters.find((p) => p.examples);
      if (bodyExamples.length > 0) {
        for (const [name, example] of bodyExamples) exchanges.push({ method, path, name, example });
      } else if (parameter?.examples) {
        for (const [name, example] of Object.entries(parameter.examples)) {
          exchanges.push({ method, path, name, example, parameter });
        }
      } else {
        exchanges.push({ method, path, name: 'as is' });
      }
    }
  }
  expect(exchanges.length).toBeGreaterThan(15);

  for (const exchange of exchanges) {
    const label = `${exchange.method.toUpperCase()} ${exchange.path} (${exchange.name})`;
    // The examples name one order; each exchange pays or reads a fresh one of its own.
    const orderNo = await createOrder(request, { layers: ALL_ON });
    // An example that needs a paid order (a refund) pays it first.
    if (exchange.example?.['x-given'] === 'paid') {
      const paid = await request.post('/api/payments', {
        headers: { 'x-client-id': 'contract', 'idempotency-key': `pay-${orderNo}` },
        data: { orderNo, amountCents: 4200 },
      });
      expect(paid.status(), `${exchange.name}: its order is paid first`).toBe(201);
    }
    const swap = (value: unknown) => JSON.parse(JSON.stringify(value ?? null).replaceAll(EXAMPLE_ORDER_NO, orderNo));
    let url = exchange.path;
    const params = new URLSearchParams();
    if (exchange.parameter && exchange.example) {
      const value = String(swap(exchange.example.value));
      if (exchange.parameter.in === 'path') url = url.replace(`{${exchange.parameter.name}}`, value);
      else params.set(exchange.parameter.name, value);
    }
    const headers: Record<string, string> = { 'x-client-id': 'contract' };
    const operation = document.paths[exchange.path]?.[exchange.method] ?? {};
    const wantsKey = ((operation.parameters ?? []) as Parameter[]).some(
      (p) => p.name === 'idempotency-key' && p.required,
    );
    if (wantsKey) headers['idempotency-key'] = `"contract ${label} ${orderNo}"`;
    const response = await request.fetch(`${url}${params.size > 0 ? `?${params}` : ''}`, {
      method: exchange.method,
      headers,
      ...(exchange.example && !exchange.parameter ? { data: swap(exchange.example.value) } : {}),
    });

    const status = response.status();
    if (exchange.example) expect(status, label).toBe(exchange.example['x-status']);
    const documented = ((operation.responses ?? {}) as Record<string, Json>)[String(status)];
    expect(documented, `${label}: status ${status} is documented`).toBeDefined();
    for (const [name, header] of Object.entries(
      (documented?.headers ?? {}) as Record<string, { required?: boolean }>,
    )) {
      if (header.required) expect(response.headers()[name], `${label}: header ${name}`).toBeDefined();
    }
    const media = Object.entries((documented?.content ?? {}) as Record<string, { schema: Json }>)[0];
    if (!media) continue;
    expect(response.headers()['content-type'], label).toContain(media[0]);
    const validate = ajv.compile(media[1].schema);
    const body = await response.json();
    expect(validate(body) ? [] : validate.errors, `${label}: body matches the documented schema`).toEqual([]);
  }
});
