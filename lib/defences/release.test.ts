import { describe, expect, it } from 'vitest';
import type { Ending } from './defence.ts';
import { RELEASE_RULES } from './layers.ts';
import { claimFate } from './release.ts';

const paid = {
  status: 'PAID',
  orderNo: 'ord_1',
  amountCents: 4200,
  chargeId: 'ch_1',
  paidAt: '2026-12-03T00:00:00.000Z',
} as const;
const banked = (verdict: Extract<Ending, { kind: 'banked' }>['verdict'], failure?: unknown): Ending => ({
  kind: 'banked',
  verdict,
  answer: { kind: 'completed', outcome: paid },
  ...(failure === undefined ? {} : { failure }),
});

// The table of release.ts's header, row by row: the right rule and each wrong one.
const ROWS: Array<{ end: Ending; tookOver?: boolean; fates: Record<(typeof RELEASE_RULES)[number], string> }> = [
  {
    end: banked({ kind: 'settled', outcome: paid, existing: false }),
    fates: { noMoneyMoved: 'complete', anyError: 'complete', never: 'complete' },
  },
  {
    end: { kind: 'stopped', answer: { kind: 'duplicate', outcome: paid, answeredBy: 'stateMachine', existing: true } },
    fates: { noMoneyMoved: 'complete', anyError: 'complete', never: 'complete' },
  },
  {
    end: banked({ kind: 'settled', outcome: paid, existing: false }, new Error('notify')),
    fates: { noMoneyMoved: 'complete', anyError: 'release', never: 'leave' },
  },
  {
    end: banked({ kind: 'nothingMoved' }),
    fates: { noMoneyMoved: 'release', anyError: 'release', never: 'leave' },
  },
  {
    end: { kind: 'stopped', answer: { kind: 'in_progress', answeredBy: 'stateMachine' } },
    fates: { noMoneyMoved: 'release', anyError: 'release', never: 'leave' },
  },
  {
    end: { kind: 'stopped', answer: { kind: 'in_progress', answeredBy: 'stateMachine' } },
    tookOver: true,
    fates: { noMoneyMoved: 'keepUnknown', anyError: 'release', never: 'leave' },
  },
  {
    end: banked({ kind: 'unknown', since: 5 }),
    fates: { noMoneyMoved: 'keepUnknown', anyError: 'release', never: 'leave' },
  },
  // A claim taken over: its own call in doubt is kept so too; its own call that moved nothing is given back (its
  // question to the bank raised the bank's fencing token first, so nothing of the earlier attempts can land).
  {
    end: banked({ kind: 'unknown', since: 5 }),
    tookOver: true,
    fates: { noMoneyMoved: 'keepUnknown', anyError: 'release', never: 'leave' },
  },
  {
    end: banked({ kind: 'nothingMoved' }),
    tookOver: true,
    fates: { noMoneyMoved: 'release', anyError: 'release', never: 'leave' },
  },
];

describe('when a claim is given back (the article’s third detail)', () => {
  for (const rule of RELEASE_RULES) {
    it(`under "${rule}", as the table says`, () => {
      expect(ROWS.map((row) => claimFate(rule, row.end, row.tookOver).kind)).toEqual(
        ROWS.map((row) => row.fates[rule]),
      );
    });
  }

  it('never releases under the right rule once money may have moved', () => {
    const moved = [
      banked({ kind: 'settled', outcome: paid, existing: false }, new Error('notify')),
      banked({ kind: 'unknown', since: 5 }),
    ];
    for (const end of moved) expect(claimFate('noMoneyMoved', end).kind).not.toBe('release');
  });

  it('says when a release or a completion is the wrong rule’s, or comes after a failure', () => {
    const notified = banked({ kind: 'settled', outcome: paid, existing: false }, new Error('notify'));
    expect(claimFate('anyError', notified)).toEqual({ kind: 'release', onError: true });
    expect(claimFate('anyError', banked({ kind: 'nothingMoved' }))).toEqual({ kind: 'release', onError: false });
    expect(claimFate('noMoneyMoved', notified)).toMatchObject({ kind: 'complete', afterFailure: true });
    expect(claimFate('noMoneyMoved', banked({ kind: 'unknown', since: 5 }))).toEqual({ kind: 'keepUnknown', since: 5 });
  });
});
