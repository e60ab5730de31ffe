import { describe, expect, it } from 'vitest';
import { allowHeader, otherMethods } from './methods.ts';

describe('otherMethods', () => {
  it('answers every method a route does not take with 405, Allow and a problem', async () => {
    const handlers = otherMethods('POST');
    expect(Object.keys(handlers).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT']);
    const answer = handlers.DELETE(new Request('http://app.invalid/api/payments', { method: 'DELETE' }));
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST, OPTIONS');
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(await answer.json()).toMatchObject({
      type: '/problems/method-not-allowed',
      status: 405,
      detail: 'DELETE is not allowed here; allowed: POST, OPTIONS.',
      allow: ['POST', 'OPTIONS'],
    });
  });

  it('leaves HEAD to a GET route (Next.js runs GET for it), and OPTIONS names what the route takes', () => {
    const handlers = otherMethods('GET', 'PUT');
    expect(Object.keys(handlers).sort()).toEqual(['DELETE', 'OPTIONS', 'PATCH', 'POST']);
    const options = handlers.OPTIONS(new Request('http://app.invalid/api/lab/config', { method: 'OPTIONS' }));
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, PUT, OPTIONS');
  });

  it('spells Allow in a fixed order', () => {
    expect(allowHeader(['DELETE', 'GET'])).toBe('GET, HEAD, DELETE, OPTIONS');
  });
});
