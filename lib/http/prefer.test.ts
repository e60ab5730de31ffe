import { describe, expect, it } from 'vitest';
import { MAX_WAIT_SECONDS, preferredWaitSeconds } from './prefer.ts';

describe('Prefer: wait=N (RFC 7240)', () => {
  it('reads the wait, however it is spelled, among other preferences', () => {
    expect(preferredWaitSeconds('wait=5')).toBe(5);
    expect(preferredWaitSeconds('WAIT = 3')).toBe(3);
    expect(preferredWaitSeconds('respond-async, wait=4')).toBe(4);
    expect(preferredWaitSeconds('wait="2"; foo=bar')).toBe(2);
    expect(preferredWaitSeconds('return=minimal,wait=0')).toBe(0);
  });

  it(`caps it at ${MAX_WAIT_SECONDS} s`, () => {
    expect(preferredWaitSeconds('wait=3600')).toBe(MAX_WAIT_SECONDS);
  });

  it('ignores a preference it does not understand, or a malformed wait', () => {
    for (const header of [null, '', 'respond-async', 'wait', 'wait=', 'wait=-1', 'wait=1.5', 'wait=ten', 'waits=3']) {
      expect(preferredWaitSeconds(header), String(header)).toBeUndefined();
    }
  });
});
