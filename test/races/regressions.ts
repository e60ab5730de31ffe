// Schedules that once charged a card twice (or lost a charge), kept as regression cases. Each one is a
// configuration and an interleaving, replayed exactly by the race explorer; the comment says what
// happened before the fix. See docs/decisions/012-fenced-recovery.md.
import type { Schedule } from './explorer.ts';

const off = { requestKey: false, stateMachine: false, uniqueConstraint: false, bankKey: false };
const only = (...layers: Array<keyof typeof off>) => ({ ...off, ...Object.fromEntries(layers.map((l) => [l, true])) });

export const REGRESSIONS: Array<{ name: string; schedule: Schedule }> = [
  {
    // The first attempt died holding the order (PROCESSING, nothing charged). dup1 and dup2, stopped by layer
    // 3, both read the dead claim; dup1 released it and claimed the order again; dup2 then released dup1's
    // live claim (the release checked the status, not the attempt it had judged dead), claimed and charged;
    // dup1 charged too.
    name: 'defect 1: two duplicates release a dead claim, the second one a fresh claim',
    schedule: {
      layers: only('stateMachine'),
      first: 'crashBeforeCharge',
      duplicates: 2,
      sameKey: false,
      reconcilers: 0,
      ticks: ['lease'],
      choices: [0, 0, 3, 3, 1, 1, 2, 2, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2],
    },
  },
  ...(['stateMachine', 'uniqueConstraint', 'both'] as const).map((layer) => ({
    // The first attempt stalled past its lease. A duplicate read its claim as stale; the first attempt woke
    // up, renewed the claim and passed its check; the duplicate asked the bank (nothing yet), released the
    // claim anyway, claimed and charged; the first attempt charged too.
    name: `defect 2: the fence is check-then-act (${layer === 'both' ? 'layers 3 and 4' : layer})`,
    schedule: {
      layers: layer === 'both' ? only('stateMachine', 'uniqueConstraint') : only(layer),
      first: 'none' as const,
      duplicates: 1,
      sameKey: false,
      reconcilers: 0,
      // Before the fix, layer 4's lease was judged by the row's creation time, on PostgreSQL's clock: the
      // clock jumps further than one lease here, so that the claim is stale on either clock.
      ticks: [layer === 'uniqueConstraint' ? ('window' as const) : ('lease' as const)],
      choices: [0, 0, 2, 2, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0],
    },
  })),
  {
    // The same race with the reconciler: the first attempt charged and told the customer PAID, while the
    // reconciler moved the order back to PENDING; the next payer claimed it and charged again.
    name: 'defect 2: the reconciler releases a claim its owner renewed and charged under',
    schedule: {
      layers: only('stateMachine'),
      first: 'none',
      duplicates: 1,
      sameKey: false,
      reconcilers: 1,
      ticks: ['lease'],
      choices: [0, 0, 3, 3, 2, 0, 2, 2, 0, 2, 0, 0],
    },
  },
  {
    // Layer 2 alone: the first attempt stalled past its lease; its key expired and the retry (same key)
    // claimed it and charged; the first attempt's check said yes (nothing renews or checks a Redis claim
    // when layers 3-4 are off) and it charged too.
    name: 'defect 3: layer 2 has no fence',
    schedule: {
      layers: only('requestKey'),
      first: 'none',
      duplicates: 1,
      sameKey: true,
      reconcilers: 0,
      ticks: ['lease'],
      choices: [0, 0, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0],
    },
  },
  {
    // The bank timed out before charging, and charged later. A duplicate found the order UNKNOWN, asked the
    // bank ("no charge" - yet), released it, claimed and charged; then the late charge landed: two.
    name: 'defect 4: "no charge yet" taken for "never charged"',
    schedule: {
      layers: only('stateMachine'),
      first: 'lateCharge',
      duplicates: 1,
      sameKey: false,
      reconcilers: 0,
      ticks: [],
      choices: [0],
    },
  },
];
