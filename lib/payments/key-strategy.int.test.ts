// The article's first detail against the real Redis and PostgreSQL: layer 2 alone, and the three ways of
// making its key. The business identity stops the duplicate; a hash of parameters that carry a timestamp,
// and a key minted per submit, do not (and the card is charged twice).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chargeCount, newOrder, only, testPayOptions } from '../../test/payments.ts';
import type { KeyStrategy } from '../lab/settings.ts';
import { clientScope, sessionScope } from '../session.ts';
import { pay } from './pay.ts';

const mintKey = () => randomBytes(16).toString('hex');

/** Two submits of one checkout page, one after the other, as a double click arrives (token off). */
async function doubleClick(strategy: KeyStrategy) {
  const orderNo = await newOrder({ layers: only('requestKey'), keys: { strategy } });
  const caller = sessionScope(randomBytes(16).toString('base64url'));
  const submit = (submittedAt: number) =>
    pay(
      { orderNo, caller, channel: 'browser', params: { orderNo, submittedAt }, submitKey: mintKey() },
      testPayOptions(),
    );
  const first = await submit(1_700_000_000_000);
  const second = await submit(1_700_000_000_140); // 140 ms later, as the second click of a double click
  return { first, second, charges: await chargeCount(orderNo) };
}

describe('key strategies, layer 2 alone', () => {
  it('business: the second click is answered with the first outcome; one charge', async () => {
    const { second, charges } = await doubleClick('business');
    expect(second).toMatchObject({ kind: 'duplicate', answeredBy: 'requestKey' });
    expect(charges).toBe(1);
  });

  for (const strategy of ['paramHash', 'perSubmit'] as const) {
    it(`${strategy}: the second click is a new key, and charges again`, async () => {
      const { first, second, charges } = await doubleClick(strategy);
      expect([first.kind, second.kind]).toEqual(['completed', 'completed']);
      expect(charges).toBe(2);
    });
  }

  it('paramHash: a byte-identical resend (same timestamp) is the same key, and is replayed', async () => {
    const orderNo = await newOrder({ layers: only('requestKey'), keys: { strategy: 'paramHash' } });
    const caller = clientScope('resender');
    const params = { orderNo, amountCents: 4200, requestedAt: 1_700_000_000_000 };
    const send = () => pay({ orderNo, caller, channel: 'api', idempotencyKey: 'ignored', params }, testPayOptions());
    expect((await send()).kind).toBe('completed');
    expect(await send()).toMatchObject({ kind: 'duplicate', answeredBy: 'requestKey' });
    expect(await chargeCount(orderNo)).toBe(1);
  });

  it('perSubmit on the API: the caller’s Idempotency-Key is ignored, each request is a stranger', async () => {
    const orderNo = await newOrder({ layers: only('requestKey'), keys: { strategy: 'perSubmit' } });
    const caller = clientScope('per-request');
    const send = () => pay({ orderNo, caller, channel: 'api', idempotencyKey: 'same' }, testPayOptions());
    expect((await send()).kind).toBe('completed');
    expect((await send()).kind).toBe('completed');
    expect(await chargeCount(orderNo)).toBe(2);
  });

  it('any strategy: layer 3 still stops the second charge (the keys differ, the order is one)', async () => {
    const orderNo = await newOrder({ layers: only('requestKey', 'stateMachine'), keys: { strategy: 'perSubmit' } });
    const caller = clientScope('with-layer-3');
    const send = () => pay({ orderNo, caller, channel: 'api', idempotencyKey: 'same' }, testPayOptions());
    expect((await send()).kind).toBe('completed');
    expect(await send()).toMatchObject({ kind: 'duplicate', answeredBy: 'stateMachine', existing: true });
    expect(await chargeCount(orderNo)).toBe(1);
  });
});
