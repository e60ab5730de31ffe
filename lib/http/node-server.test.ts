import { describe, expect, it } from 'vitest';
import { allowedAt, answeredHere } from './node-server.ts';

describe('what the Node server answers before Next.js', () => {
  it('every method a page does not take, and on a route every method outside the usual seven', () => {
    for (const method of ['TRACE', 'TRACK', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'MKCOL', 'QUERY']) {
      expect(answeredHere(method, '/'), method).toBe(true);
      expect(answeredHere(method, '/checkout/ord_0000000000000000?x=1'), method).toBe(true);
      expect(answeredHere(method, '/api/docs'), method).toBe(true); // the API reference is a page
    }
    for (const method of ['GET', 'HEAD', 'POST']) expect(answeredHere(method, '/lab'), method).toBe(false);
    for (const method of ['TRACE', 'TRACK', 'PROPFIND', 'LINK', 'QUERY']) {
      expect(answeredHere(method, '/api/orders'), method).toBe(true);
    }
    // A route answers these itself: 405 with its Allow, or 204 for OPTIONS (lib/http/methods.ts).
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      expect(answeredHere(method, '/api/orders'), method).toBe(false);
    }
  });

  it('says what a target takes: an API route’s methods from the OpenAPI document, a page’s forms', () => {
    expect(allowedAt('/api/orders')).toBe('POST, OPTIONS');
    expect(allowedAt('/api/orders/ord_0000000000000000?x')).toBe('GET, HEAD, OPTIONS');
    expect(allowedAt('/lab/room')).toBe('GET, HEAD, POST, OPTIONS');
    expect(allowedAt('/api/docs')).toBe('GET, HEAD, POST, OPTIONS');
  });
});
