import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey } from './idempotency-key.ts';

const key = (header: string | null) => parseIdempotencyKey(header);

describe('Idempotency-Key (RFC 9651 String, or the bare spelling)', () => {
  it('reads both spellings of one key as one key', () => {
    expect(key('"8e03978e-40d5"')).toEqual({ ok: true, key: '8e03978e-40d5' });
    expect(key('8e03978e-40d5')).toEqual({ ok: true, key: '8e03978e-40d5' });
    expect(key('"a\\"b"')).toEqual(key('a"b'));
  });

  it('accepts a quoted key with spaces, and escapes', () => {
    expect(key('"order 42, attempt 1"')).toEqual({ ok: true, key: 'order 42, attempt 1' });
    expect(key('"back\\\\slash"')).toEqual({ ok: true, key: 'back\\slash' });
  });

  it('refuses malformed keys, naming the rule', () => {
    expect(key(null)).toMatchObject({ ok: false, rule: 'required' });
    expect(key('')).toMatchObject({ ok: false, rule: 'empty' });
    expect(key('""')).toMatchObject({ ok: false, rule: 'empty' });
    expect(key('"unterminated')).toMatchObject({ ok: false, rule: 'quoted' });
    expect(key('"bad \\x escape"')).toMatchObject({ ok: false, rule: 'quoted' });
    expect(key('"ünï"')).toMatchObject({ ok: false, rule: 'quoted' });
    expect(key('"k";expires=1')).toMatchObject({ ok: false, rule: 'parameters' });
    expect(key('has space')).toMatchObject({ ok: false, rule: 'bare' });
    expect(key('ünïcode')).toMatchObject({ ok: false, rule: 'bare' });
    expect(key('a'.repeat(256))).toMatchObject({ ok: false, rule: 'long' });
    expect(key(`"${'a'.repeat(256)}"`)).toMatchObject({ ok: false, rule: 'long' });
    expect(key('a'.repeat(255))).toMatchObject({ ok: true });
  });

  // The draft's key is one sf-string Item. Unquoted, a comma makes it a List (what a proxy makes of two
  // Idempotency-Key headers), a semicolon starts parameters: neither is one key (issue 31: both paid, 201).
  it('refuses an unquoted list of keys, or an unquoted key with parameters', () => {
    expect(key('key,with,commas,longer-than-twenty-chars')).toMatchObject({ ok: false, rule: 'list' });
    expect(key('first-key,second-key')).toMatchObject({ ok: false, rule: 'list' });
    expect(key('"first-key","second-key"')).toMatchObject({ ok: false, rule: 'list' });
    expect(key('k;expires=1')).toMatchObject({ ok: false, rule: 'parameters' });
    expect(key('"a,b;c"')).toEqual({ ok: true, key: 'a,b;c' });
  });
});
