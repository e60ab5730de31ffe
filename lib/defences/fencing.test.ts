import { describe, expect, it } from 'vitest';
import { judgeBankAnswer, judgeClaim } from './fencing.ts';

const claim = { holder: 'a', fence: 4, firstFence: 4, claimedAt: 10_000, unknownSince: null };

describe('leases', () => {
  it('keeps a held claim alive within its lease, and hands it over after', () => {
    expect(judgeClaim(claim, { now: 10_999, leaseMs: 1_000 })).toEqual({ kind: 'live', holder: 'a' });
    expect(judgeClaim(claim, { now: 11_000, leaseMs: 1_000 })).toEqual({ kind: 'dead' });
  });

  it('hands over at once an unknown outcome nobody holds, or a claim of an attempt known to be dead', () => {
    expect(judgeClaim({ ...claim, holder: null }, { now: 10_001, leaseMs: 1_000 })).toEqual({ kind: 'dead' });
    const deadAttempt = (id: string) => id === 'a';
    expect(judgeClaim(claim, { now: 10_001, leaseMs: 1_000, deadAttempt })).toEqual({ kind: 'dead' });
  });
});

describe('what the bank’s answer allows a taker', () => {
  const answer = { charges: [] as string[], previousToken: null, firstFence: 4, unknownSince: null, now: 50_000 };
  const windowMs = 10_000;

  it('a charge settles it, whatever else', () => {
    expect(judgeBankAnswer({ ...answer, charges: ['ch_1', 'ch_2'], previousToken: 9, windowMs })).toEqual({
      kind: 'charged',
      charge: 'ch_1',
    });
  });

  it('no charge is final when the bank never saw the dead claim’s token: nothing was sent, nothing can land', () => {
    expect(judgeBankAnswer({ ...answer, windowMs })).toEqual({ kind: 'nothing' });
    expect(judgeBankAnswer({ ...answer, previousToken: 3, windowMs })).toEqual({ kind: 'nothing' });
  });

  it('a chain of takeovers keeps its first token: a token the bank saw before the last taker is still in doubt', () => {
    // The first claim (4) reached the bank; a taker (5) died before asking; the next taker judges the chain.
    expect(judgeBankAnswer({ ...answer, previousToken: 4, firstFence: 4, windowMs })).toEqual({
      kind: 'wait',
      until: 60_000,
    });
    expect(judgeBankAnswer({ ...answer, previousToken: 4, firstFence: 5, windowMs })).toEqual({ kind: 'nothing' });
  });

  it('no charge is only "no charge yet" when the bank saw the token, until the settlement window has passed', () => {
    expect(judgeBankAnswer({ ...answer, previousToken: 4, windowMs })).toEqual({ kind: 'wait', until: 60_000 });
    expect(judgeBankAnswer({ ...answer, previousToken: 4, unknownSince: 45_000, windowMs })).toEqual({
      kind: 'wait',
      until: 55_000,
    });
    expect(judgeBankAnswer({ ...answer, previousToken: 4, unknownSince: 40_000, windowMs })).toEqual({
      kind: 'nothing',
    });
  });
});
