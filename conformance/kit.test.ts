// The kit against a minimal endpoint written here: a plain Node server with the idempotency many services start
// with, a SET NX on the key and nothing else. It forgets the state in between (a retry while the first runs finds
// the key set and no answer yet: an empty 200), checks no key's syntax, keeps no fingerprint of the body, scopes
// no key per caller, replays with 200 whatever the first answer was, and refuses a missing key in plain text. The
// kit must report the failures a reviewer would expect of it, each with its evidence; its JUnit XML must parse.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Adapter } from './adapter.ts';
import { CASES } from './cases.ts';
import { type RunResult, runConformance, selectCases } from './kit.ts';
import { junitOf, summaryOf, tableOf } from './report.ts';

/** A naive idempotent endpoint: POST /v1/transfers, its side effects counted per reference (GET /count/<ref>). */
function naiveEndpoint(): Server {
  const answers = new Map<string, string | null>();
  const effects = new Map<string, number>();
  const handle = async (request: IncomingMessage, response: ServerResponse, text: string) => {
    if (request.method === 'GET' && request.url?.startsWith('/count/')) {
      return response.end(String(effects.get(request.url.slice('/count/'.length)) ?? 0));
    }
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string') {
      response.writeHead(400, { 'content-type': 'text/plain' });
      return response.end('Idempotency-Key required');
    }
    if (answers.has(key)) {
      // SET NX failed: "already done". The answer, if there is one yet; the in-between state is forgotten.
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end(answers.get(key) ?? '{}');
    }
    answers.set(key, null);
    const body = JSON.parse(text) as { reference: string; amountCents: number; delayMs?: number };
    effects.set(body.reference, (effects.get(body.reference) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, body.delayMs ?? 0));
    const answer = JSON.stringify({ id: randomUUID(), reference: body.reference, amountCents: body.amountCents });
    answers.set(key, answer);
    response.writeHead(201, { 'content-type': 'application/json' });
    response.end(answer);
  };
  return createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => void handle(request, response, text));
  });
}

/** Its adapter: it can slow the side effect (delayMs) and count it; callers are named, though the server ignores them. */
function naiveAdapter(): Adapter {
  return {
    name: 'a naive SET NX endpoint',
    callerHeaders: (caller) => ({ 'x-client-id': caller }),
    canSlow: true,
    async subject({ slowMs, send }) {
      const reference = randomUUID();
      return {
        path: '/v1/transfers',
        body: { reference, amountCents: 500, ...(slowMs ? { delayMs: slowMs } : {}) },
        otherBody: { reference, amountCents: 700 },
        async sideEffects() {
          const answer = await send({ method: 'GET', path: `/count/${reference}` });
          return answer.kind === 'answered' ? Number(answer.text) : Number.NaN;
        },
      };
    },
  };
}

/** What a reviewer expects of the naive endpoint, case by case. */
const EXPECTED: Record<string, 'pass' | 'fail' | 'skip'> = {
  'missing-key': 'pass',
  'malformed-key': 'fail', // any header is a key
  'key-reused-with-another-body': 'fail', // no fingerprint: the first answer, 200
  'exact-replay': 'fail', // replayed as 200, the first was 201
  'retry-while-running': 'fail', // an empty 200, not 409
  'prefer-wait': 'fail', // the same empty 200
  'key-spellings': 'fail', // "k" and k are two keys: two transfers
  'keys-scoped-per-caller': 'fail', // another caller gets the first caller's answer
  'errors-are-problems': 'fail', // its 400 is text/plain
  'concurrent-same-key': 'fail', // one 201 and nineteen empty 200s
  'concurrent-keys-one-intent': 'skip', // the adapter does not say a body names the intent
  'burst-after-timeout': 'fail', // empty 200s during the burst, the answer after
  'timeout-then-retry': 'fail', // the retry's success is the empty placeholder
  'retry-after-lost-answer': 'pass', // once the first has finished, the stored answer comes back
};

describe('the conformance kit', () => {
  let server: Server;
  let result: RunResult;

  beforeAll(async () => {
    server = naiveEndpoint();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    result = await runConformance({
      target: new URL(`http://127.0.0.1:${port}`),
      adapter: naiveAdapter(),
      // Long enough that a retry meets the first still running on a busy machine: the cases that retry while it
      // runs do so after a quarter or a half of it, plus 100 ms; at 600 ms, with two test runs on this machine's
      // two cores, timeout-then-retry's retry once came after the first had ended, and got its answer.
      slowMs: 1_500,
    });
  }, 120_000);
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reports the failures a reviewer expects of a naive SET NX endpoint, case by case', () => {
    expect(Object.fromEntries(result.cases.map((c) => [c.name, c.status]))).toEqual(EXPECTED);
    expect(Object.keys(EXPECTED)).toEqual(CASES.map((c) => c.name));
  });

  it('gives each failure its evidence: what was sent, what came back, the side effects', () => {
    const evidence = (name: string) => result.cases.find((c) => c.name === name)?.evidence.join('\n') ?? '';
    expect(evidence('retry-while-running')).toMatch(/✗ retry while the first runs: 200 .*\(expected 409\)/);
    expect(evidence('key-spellings')).toContain('✗ side effects: 2 (expected 1)');
    expect(evidence('errors-are-problems')).toMatch(/✗ no key: 400 .*text\/plain/);
    expect(evidence('malformed-key')).toMatch(/✗ Idempotency-Key: key,with,commas,longer-than-twenty-chars → 201/);
    expect(evidence('keys-scoped-per-caller')).toMatch(/✗ caller B, same key: 200 .*caller A’s answer/);
    expect(tableOf(result)).toMatch(/2 passed, 11 failed, 1 skipped; \d+ requests/);
  });

  it('writes JUnit XML that a parser reads: a suite per group, a case per case, a failure per failed case', () => {
    const xml = junitOf(result);
    expect(XMLValidator.validate(xml)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
    const suites = [parsed.testsuites.testsuite].flat() as Array<Record<string, unknown>>;
    expect(suites.map((suite) => String(suite.name).split(' ')[0])).toEqual(['draft', 'concurrency', 'recovery']);
    const cases = suites.flatMap((suite) => [suite.testcase].flat()) as Array<Record<string, unknown>>;
    expect(cases).toHaveLength(CASES.length);
    const { failed, skipped } = summaryOf(result);
    expect(Number(parsed.testsuites.failures)).toBe(failed);
    expect(cases.filter((c) => c.failure !== undefined)).toHaveLength(failed);
    expect(cases.filter((c) => c.skipped !== undefined)).toHaveLength(skipped);
    const spellings = cases.find((c) => String(c.name).startsWith('key-spellings:'));
    expect((spellings?.failure as { message?: string } | undefined)?.message).toMatch(/^✗/);
  });

  it('refuses an unknown case name instead of checking nothing', () => {
    expect(() => selectCases(['exact-replay', 'no-such-case'])).toThrow(/no such case: no-such-case/);
    expect(selectCases([], ['exact-replay']).map((c) => c.name)).not.toContain('exact-replay');
  });
});

/**
 * A right endpoint (409 while the first runs, the first answer replayed) in front of which the first slowed
 * transfer's first request is held for `holdMs`, as a busy machine's scheduler may hold it: the retry sent after it
 * is then seen first and runs, and the first sent is the one told 409. Both answers are right.
 */
function heldFirstEndpoint(holdMs: number): Server {
  const keys = new Map<string, { answer?: string }>();
  const effects = new Map<string, number>();
  const seen = new Set<string>();
  const handle = async (request: IncomingMessage, response: ServerResponse, text: string) => {
    if (request.method === 'GET' && request.url?.startsWith('/count/')) {
      return response.end(String(effects.get(request.url.slice('/count/'.length)) ?? 0));
    }
    const key = String(request.headers['idempotency-key']);
    const body = JSON.parse(text) as { reference: string; amountCents: number; delayMs?: number };
    if (body.delayMs && !seen.has(body.reference)) {
      seen.add(body.reference);
      if (seen.size === 1) await new Promise((resolve) => setTimeout(resolve, holdMs));
    }
    const held = keys.get(key);
    if (held) {
      response.writeHead(held.answer ? 201 : 409, { 'content-type': 'application/json', 'retry-after': '1' });
      return response.end(held.answer ?? '{}');
    }
    const claim: { answer?: string } = {};
    keys.set(key, claim);
    effects.set(body.reference, (effects.get(body.reference) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, body.delayMs ?? 0));
    claim.answer = JSON.stringify({ id: randomUUID(), reference: body.reference, amountCents: body.amountCents });
    response.writeHead(201, { 'content-type': 'application/json' });
    response.end(claim.answer);
  };
  return createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => void handle(request, response, text));
  });
}

describe('the conformance kit, when the retry is seen before the first', () => {
  // Each case against an endpoint of its own, whose first pair alone is held: the pairs sent again are not.
  it.each(['retry-while-running', 'prefer-wait'])(
    '%s sends the pair again for a new subject, and judges the pair that overlapped as sent',
    async (name) => {
      const server = heldFirstEndpoint(900);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const result = await runConformance({
          target: new URL(`http://127.0.0.1:${port}`),
          adapter: naiveAdapter(),
          only: [name],
          slowMs: 1_500,
        });
        const found = result.cases.find((c) => c.name === name);
        expect(found?.status, found?.evidence.join('\n')).toBe('pass');
        expect(found?.notes).toContain(
          'the second request was seen first (the first sent was told 409): sent again for a new subject',
        );
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
    60_000,
  );
});
