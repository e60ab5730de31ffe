import { describe, expect, it } from 'vitest';
import { hashParams, requestKeyFor, shortKey } from './key-strategy.ts';

const orderNo = 'ord_0123456789abcdef';
const mint = () => 'minted';

describe('layer 2’s key, by strategy', () => {
  it('business: the order number, or the caller’s Idempotency-Key, whatever else the request carries', () => {
    const browser = { orderNo, params: { orderNo, submittedAt: 1 }, submitKey: 'a1b2c3d4' };
    expect(requestKeyFor('business', browser, mint)).toBe(`order:${orderNo}`);
    expect(requestKeyFor('business', { ...browser, params: { orderNo, submittedAt: 2 } }, mint)).toBe(
      `order:${orderNo}`,
    );
    expect(requestKeyFor('business', { orderNo, idempotencyKey: 'k-1', params: {} }, mint)).toBe('k-1');
  });

  it('paramHash: one timestamp more in the parameters, and it is another key', () => {
    const at = (submittedAt: number) => requestKeyFor('paramHash', { orderNo, params: { orderNo, submittedAt } }, mint);
    expect(at(1_700_000_000_000)).toBe(at(1_700_000_000_000));
    expect(at(1_700_000_000_000)).not.toBe(at(1_700_000_000_120));
    expect(at(1)).toMatch(/^params:[0-9a-f]{64}$/);
  });

  it('paramHash does not depend on the order the fields came in', () => {
    expect(hashParams({ a: 1, b: 'x' })).toBe(hashParams({ b: 'x', a: 1 }));
    expect(hashParams({ a: 1 })).not.toBe(hashParams({ a: '1' }));
  });

  it('perSubmit: the submit’s own key, or one minted for the request', () => {
    expect(requestKeyFor('perSubmit', { orderNo, params: {}, submitKey: 'a1b2c3d4' }, mint)).toBe('submit:a1b2c3d4');
    expect(requestKeyFor('perSubmit', { orderNo, idempotencyKey: 'k-1', params: {} }, mint)).toBe('submit:minted');
    expect(requestKeyFor('perSubmit', { orderNo, params: {} })).not.toBe(
      requestKeyFor('perSubmit', { orderNo, params: {} }),
    );
  });

  it('shortKey keeps short keys and shortens long ones, both ends visible', () => {
    expect(shortKey(`order:${orderNo}`)).toBe(`order:${orderNo}`);
    const long = `params:${'a'.repeat(60)}beef`;
    expect(shortKey(long)).toBe(`params:${'a'.repeat(13)}…beef`);
  });
});
