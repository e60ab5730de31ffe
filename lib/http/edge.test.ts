import { describe, expect, it } from 'vitest';
import {
  malformedActionBody,
  mayBeServerAction,
  NO_CONTENT_SECURITY_POLICY,
  pageContentSecurityPolicy,
  pathDecodes,
  readAtMost,
  sameOrigin,
} from './edge.ts';

const headers = (entries: Record<string, string>) => new Headers(entries);

describe('pathDecodes', () => {
  it('accepts every path whose segments decode', () => {
    for (const path of ['/', '/checkout/ord_0123456789abcdef', '/a%20b', '/%E0%A4%A4', '/%2F', '/problems/bad-path']) {
      expect(pathDecodes(path), path).toBe(true);
    }
  });
  it('refuses a broken percent-escape or bytes that are not UTF-8', () => {
    for (const path of ['/checkout/%E0%A4%A', '/api/orders/%zz', '/%', '/a/%C0%AF', '/%FF', '/ok/%E0%A4%A/ok']) {
      expect(pathDecodes(path), path).toBe(false);
    }
  });
});

describe('mayBeServerAction', () => {
  it('is a POST with Next-Action, or any multipart POST', () => {
    expect(mayBeServerAction('POST', headers({ 'next-action': 'abc' }))).toBe(true);
    expect(mayBeServerAction('POST', headers({ 'content-type': 'multipart/form-data; boundary=x' }))).toBe(true);
    expect(mayBeServerAction('POST', headers({ 'content-type': 'Multipart/Form-Data;boundary=x' }))).toBe(true);
    expect(mayBeServerAction('POST', headers({ 'content-type': 'application/x-www-form-urlencoded' }))).toBe(false);
    expect(mayBeServerAction('GET', headers({ 'next-action': 'abc' }))).toBe(false);
  });
});

describe('sameOrigin', () => {
  it('matches the Origin a browser sends for the Host it names', () => {
    expect(sameOrigin('http://127.0.0.1:3000', '127.0.0.1:3000')).toBe(true);
    expect(sameOrigin('http://localhost', 'LOCALHOST:80')).toBe(true);
    expect(sameOrigin('https://pay.example', 'pay.example:443')).toBe(true);
    expect(sameOrigin(null, '127.0.0.1:3000')).toBe(true); // no Origin: handcrafted, no one else's cookies
  });
  it('refuses another site, another port, a null origin, nonsense', () => {
    for (const [origin, host] of [
      ['http://evil.example', '127.0.0.1:3000'],
      ['http://127.0.0.1:3001', '127.0.0.1:3000'],
      ['https://127.0.0.1:3000', '127.0.0.1:3000:443'],
      ['null', '127.0.0.1:3000'],
      ['file://', 'localhost'],
      ['not a url', '127.0.0.1:3000'],
      ['http://127.0.0.1:3000', null],
      ['http://127.0.0.1:3000', 'a b'],
    ] as const) {
      expect(sameOrigin(origin, host), `${origin} vs ${host}`).toBe(false);
    }
  });
});

describe('Content-Security-Policy', () => {
  it('lets pages run only nonce-carrying inline scripts, and never be framed', () => {
    const policy = pageContentSecurityPolicy('abc123==');
    expect(policy).toContain("script-src 'self' 'nonce-abc123=='");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("style-src-attr 'unsafe-inline'");
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
    expect(NO_CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(NO_CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
  });
});

const stream = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

describe('readAtMost', () => {
  it('reads a body up to the limit, and stops as soon as it is over', async () => {
    const text = (read: Awaited<ReturnType<typeof readAtMost>>) =>
      read.over ? 'over' : Buffer.from(read.bytes).toString();
    expect(text(await readAtMost(stream('ab', 'cd'), 4))).toBe('abcd');
    expect(text(await readAtMost(stream('ab', 'cde'), 4))).toBe('over');
    expect(text(await readAtMost(null, 4))).toBe('');
  });
});

describe('malformedActionBody', () => {
  const form = (boundary: string, fields: Array<[string, string]>) =>
    new TextEncoder().encode(
      `${fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('')}--${boundary}--\r\n`,
    );
  const multipart = 'multipart/form-data; boundary=XyZ';

  it('lets through what Next.js’s client sends', async () => {
    expect(
      await malformedActionBody(
        multipart,
        form('XyZ', [
          ['0', '["$K1"]'],
          ['1_orderNo', 'x'],
        ]),
        true,
      ),
    ).toBe(undefined);
    expect(await malformedActionBody('text/plain;charset=UTF-8', new TextEncoder().encode('[]'), true)).toBe(undefined);
    // A form posted before hydration names its action in its fields: Next.js decides.
    expect(await malformedActionBody(multipart, form('XyZ', [['$ACTION_ID_ab', '']]), false)).toBe(undefined);
  });

  it('names a broken form, a form without arguments, and arguments that are not a JSON list', async () => {
    expect(await malformedActionBody(multipart, new TextEncoder().encode('garbage'), true)).toMatch(/multipart/);
    expect(await malformedActionBody('multipart/form-data', form('XyZ', [['0', '[]']]), true)).toMatch(/multipart/);
    expect(await malformedActionBody(multipart, form('xyz', [['0', '[]']]), true)).toMatch(/multipart/); // boundary case
    expect(await malformedActionBody(multipart, form('XyZ', [['1_a', 'b']]), true)).toMatch(/field "0"/);
    expect(await malformedActionBody(multipart, form('XyZ', [['0', 'garbage']]), true)).toMatch(/JSON/);
    expect(await malformedActionBody('text/plain', new TextEncoder().encode('garbage{'), true)).toMatch(/JSON/);
    expect(await malformedActionBody('text/plain', new Uint8Array(), true)).toMatch(/JSON/);
    // JSON, but not the list of arguments Next.js's client sends: `null` was a 500 from payOrder (issue 28).
    for (const body of ['null', '{"a":1}', '7', '"x"', 'true']) {
      expect(await malformedActionBody('text/plain', new TextEncoder().encode(body), true), body).toMatch(/not a list/);
    }
    expect(await malformedActionBody(multipart, form('XyZ', [['0', '{}']]), true)).toMatch(/not a list/);
    // A list, but with references React cannot resolve: `[["$"]]` was a 500 from payOrder.
    for (const body of ['[["$"]]', '["$@1"]', '[{"a":"$h1"}]', '["$nx"]', '["$Q1"]', '["$1"]']) {
      expect(await malformedActionBody('text/plain', new TextEncoder().encode(body), true), body).toMatch(/reference/);
    }
    // What this site's forms do send: a form's fields, escaped dollars, the spellings of special values.
    for (const body of ['[{"status":"idle"},"$K1"]', '["$$5 off"]', '["$undefined","$-0","$NaN","$D2026-12-03"]']) {
      expect(await malformedActionBody('text/plain', new TextEncoder().encode(body), true), body).toBeUndefined();
    }
    expect(await malformedActionBody(multipart, new TextEncoder().encode('garbage'), false)).toMatch(/multipart/);
    expect(await malformedActionBody(multipart, form('XyZ', [['name', 'value']]), false)).toMatch(/names no action/);
  });
});
