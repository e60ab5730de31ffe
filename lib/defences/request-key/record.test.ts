import { describe, expect, it } from 'vitest';
import { decideOnExisting, decodeRecord, encodeRecord, fingerprintOf, requestKeyName } from './record.ts';

describe('request key records', () => {
  const fingerprint = fingerprintOf({ orderNo: 'ord_1', amountCents: 4200 });

  it('fingerprints the payload, whatever the order of its fields', () => {
    expect(fingerprintOf({ amountCents: 4200, orderNo: 'ord_1' })).toBe(fingerprint);
    expect(fingerprintOf({ orderNo: 'ord_1', amountCents: 4201 })).not.toBe(fingerprint);
    expect(fingerprintOf({ orderNo: 'ord_2', amountCents: 4200 })).not.toBe(fingerprint);
  });

  it('scopes the key to the caller', () => {
    expect(requestKeyName('c.shop', 'k1')).toBe('idem:{c.shop:k1}');
    expect(requestKeyName('s.abc', 'k1')).not.toBe(requestKeyName('c.abc', 'k1'));
  });

  const context = { now: 10_000, leaseMs: 1_000 };
  const processing = (since: number) =>
    decodeRecord(encodeRecord({ state: 'processing', owner: 'a', fingerprint, since, fence: 7 }));

  it('replays a finished outcome, waits for a running one, and refuses a different payload', () => {
    const outcome = { status: 'PAID' };
    const done = decodeRecord(encodeRecord({ state: 'done', owner: 'a', fingerprint, outcome }));
    expect(decideOnExisting(done, fingerprint, context)).toEqual({ kind: 'replay', outcome, existing: false });
    const reported = decodeRecord(encodeRecord({ state: 'done', owner: 'a', fingerprint, outcome, existing: true }));
    expect(decideOnExisting(reported, fingerprint, context)).toEqual({ kind: 'replay', outcome, existing: true });
    expect(decideOnExisting(processing(9_500), fingerprint, context)).toEqual({ kind: 'in_progress', owner: 'a' });
    const other = decodeRecord(encodeRecord({ state: 'done', owner: 'a', fingerprint: 'other', outcome }));
    expect(decideOnExisting(other, fingerprint, context)).toEqual({ kind: 'mismatch' });
  });

  it('binds a key to the endpoint it was first used on (records from before default to payments)', () => {
    const order = decodeRecord(
      encodeRecord({ state: 'done', owner: 'a', fingerprint, endpoint: 'POST /api/orders', outcome: {} }),
    );
    expect(decideOnExisting(order, fingerprint, context)).toEqual({ kind: 'mismatch', usedOn: 'POST /api/orders' });
    expect(decideOnExisting(order, fingerprint, { ...context, endpoint: 'POST /api/orders' })).toMatchObject({
      kind: 'replay',
    });
    const legacy = decodeRecord(`{"state":"done","owner":"a","fingerprint":"${fingerprint}","outcome":{}}`);
    expect(decideOnExisting(legacy, fingerprint, context)).toMatchObject({ kind: 'replay' });
  });

  it('hands over a claim past its lease, or an unknown outcome nobody holds, with what a takeover compares', () => {
    expect(decideOnExisting(processing(8_999), fingerprint, context)).toEqual({
      kind: 'abandoned',
      claim: { holder: 'a', fence: 7, firstFence: 7, claimedAt: 8_999, unknownSince: null, unknown: false },
    });
    // A claim taken over carries the first token of its chain.
    const unknown = decodeRecord(
      encodeRecord({
        state: 'unknown',
        owner: null,
        fingerprint,
        since: 9_900,
        fence: 8,
        firstFence: 5,
        unknownSince: 9_900,
      }),
    );
    expect(decideOnExisting(unknown, fingerprint, context)).toEqual({
      kind: 'abandoned',
      claim: { holder: null, fence: 8, firstFence: 5, claimedAt: 9_900, unknownSince: 9_900, unknown: true },
    });
  });

  it('treats an unreadable record as a running claim (refusing is safe, proceeding is not)', () => {
    expect(decodeRecord('{"state":"weird"}')).toBeUndefined();
    expect(decodeRecord('not json')).toBeUndefined();
    expect(decideOnExisting(undefined, fingerprint, context).kind).toBe('in_progress');
  });

  it('round-trips a record; one written before fencing reads as fence 0', () => {
    const record = {
      state: 'processing',
      owner: 'a.b.c',
      fingerprint,
      since: 1,
      fence: 3,
      unknownSince: null,
    } as const;
    expect(decodeRecord(encodeRecord(record))).toEqual({ ...record, endpoint: 'POST /api/payments' });
    expect(decodeRecord('{"state":"processing","owner":"o","fingerprint":"f","since":1}')).toMatchObject({ fence: 0 });
  });
});
