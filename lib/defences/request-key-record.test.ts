import { describe, expect, it } from 'vitest';
import {
  decideOnExisting,
  decodeRecord,
  encodeRecord,
  fingerprintOf,
  IdempotencyKeySchema,
  requestKeyName,
} from './request-key-record.ts';

describe('request key records', () => {
  const fingerprint = fingerprintOf({ orderNo: 'ord_1', amountCents: 4200 });

  it('fingerprints the payload, whatever the order of its fields', () => {
    expect(fingerprintOf({ amountCents: 4200, orderNo: 'ord_1' })).toBe(fingerprint);
    expect(fingerprintOf({ orderNo: 'ord_1', amountCents: 4201 })).not.toBe(fingerprint);
    expect(fingerprintOf({ orderNo: 'ord_2', amountCents: 4200 })).not.toBe(fingerprint);
  });

  it('scopes the key to the caller', () => {
    expect(requestKeyName('c.shop', 'k1')).toBe('idem:c.shop:k1');
    expect(requestKeyName('s.abc', 'k1')).not.toBe(requestKeyName('c.abc', 'k1'));
  });

  it('replays a finished outcome, waits for a running one, and refuses a different payload', () => {
    const outcome = { status: 'PAID' };
    expect(decideOnExisting({ state: 'done', owner: 'a', fingerprint, outcome }, fingerprint)).toEqual({
      kind: 'replay',
      outcome,
    });
    expect(decideOnExisting({ state: 'processing', owner: 'a', fingerprint, since: 5 }, fingerprint)).toEqual({
      kind: 'in_progress',
      since: 5,
      owner: 'a',
    });
    expect(decideOnExisting({ state: 'unknown', owner: 'a', fingerprint, since: 5 }, fingerprint)).toEqual({
      kind: 'unknown',
      owner: 'a',
    });
    expect(decideOnExisting({ state: 'done', owner: 'a', fingerprint: 'other', outcome }, fingerprint)).toEqual({
      kind: 'mismatch',
    });
  });

  it('treats an unreadable record as a running claim (refusing is safe, proceeding is not)', () => {
    expect(decodeRecord('{"state":"weird"}')).toBeUndefined();
    expect(decodeRecord('not json')).toBeUndefined();
    expect(decideOnExisting(undefined, fingerprint).kind).toBe('in_progress');
  });

  it('round-trips a record', () => {
    const record = { state: 'processing', owner: 'a.b.c', fingerprint, since: 1 } as const;
    expect(decodeRecord(encodeRecord(record))).toEqual(record);
  });

  it('accepts Idempotency-Key values as Stripe does', () => {
    expect(IdempotencyKeySchema.safeParse('3f1c-retry_ok.1').success).toBe(true);
    expect(IdempotencyKeySchema.safeParse('').success).toBe(false);
    expect(IdempotencyKeySchema.safeParse('a'.repeat(256)).success).toBe(false);
    expect(IdempotencyKeySchema.safeParse('has space').success).toBe(false);
    expect(IdempotencyKeySchema.safeParse('ünïcode').success).toBe(false);
  });
});
