// Schedules that once charged a card twice, lost a charge, or broke another invariant, kept as regression
// cases. Each is a script: who runs to which named point, who dies, what strikes (explorer.ts). The comment
// says what happened before the fix. See docs/decisions/012-fenced-recovery.md.
import type { RacePoint } from '../../lib/defences/race-points.ts';
import type { Script } from './explorer.ts';
import type { ServerLayer, ServerLayers } from './world.ts';

const off: ServerLayers = { requestKey: false, stateMachine: false, uniqueConstraint: false, bankKey: false };
const only = (...layers: ServerLayer[]): ServerLayers => ({
  ...off,
  ...Object.fromEntries(layers.map((layer) => [layer, true])),
});
const label = (layers: ServerLayers) => {
  const on = (Object.keys(layers) as ServerLayer[]).filter((layer) => layers[layer]);
  const number = { requestKey: 2, stateMachine: 3, uniqueConstraint: 4, bankKey: 5 };
  return on.length === 1
    ? `layer ${number[on[0] as ServerLayer]} alone`
    : `layers ${on.map((l) => number[l]).join('+')}`;
};

export type Regression = { name: string; script: Script };

/**
 * The first attempt claims its key, and what the database guards a lease later (a busy machine between the two); its
 * retry, with its key, finds the key dead and that claim live; the first wakes a lease after that. `later 1` below,
 * and the refunds' own script (refund-world.ts).
 */
export const LOST_KEY_WHILE_AWAY: Array<{ run: string; to?: RacePoint } | { strike: 'lease' }> = [
  { run: 'first', to: 'order.claim' },
  { strike: 'lease' },
  { run: 'first', to: 'pay.beforeBank' },
  { run: 'dup1' },
  { strike: 'lease' },
  { run: 'first' },
];

/**
 * The first attempt, away for a lease before the bank, renews its claims (the innermost first): the database's,
 * then its key, whose store fails (Redis unreachable). `later 2` below, and the refunds' own script.
 */
export const KEY_UNRENEWED: Array<{ run: string; to?: RacePoint } | { strike: 'lease' } | { fail: string }> = [
  { run: 'first', to: 'pay.beforeBank' },
  { strike: 'lease' },
  { run: 'first', to: 'key.renew' },
  { fail: 'first' },
  { run: 'first' },
];

/** The database's layers, alone and together, with and without the request key in front. */
const DATABASE_CONFIGS = [
  only('stateMachine'),
  only('uniqueConstraint'),
  only('stateMachine', 'uniqueConstraint'),
  only('requestKey', 'stateMachine', 'uniqueConstraint'),
];

export const REGRESSIONS: Regression[] = [
  // ---- found and fixed in the first review (decision 012) ----
  {
    // The first attempt died holding the order (PROCESSING, nothing charged). dup1 and dup2, stopped by layer
    // 3, both judged the claim dead; dup1 took it over and went on to pay; dup2 then released dup1's live
    // claim (the release checked the status, not the claim it had judged dead), claimed and charged; dup1 too.
    name: 'old 1: two duplicates find one dead claim; the second must not release the first one’s fresh claim',
    script: {
      layers: only('stateMachine'),
      sameKey: false,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0' },
        { name: 'dup1', kind: 'pay', key: 'k1' },
        { name: 'dup2', kind: 'pay', key: 'k2' },
      ],
      steps: [
        { run: 'first', to: 'pay.beforeBank' },
        { crash: 'first' },
        { strike: 'lease' },
        { run: 'dup1', to: 'reconcile.takeOver' },
        { run: 'dup2', to: 'reconcile.takeOver' },
        { run: 'dup1', to: 'pay.bank' },
        { run: 'dup2' },
      ],
    },
  },
  ...DATABASE_CONFIGS.slice(0, 3).map((layers) => ({
    // The first attempt stalled past its lease. A duplicate judged its claim dead; the first attempt woke up,
    // renewed the claim and passed its check; the duplicate asked the bank (nothing yet), released the claim
    // anyway, claimed and charged; the first attempt charged too.
    name: `old 2: a claim renewed after a duplicate judged it dead (${label(layers)})`,
    script: {
      layers,
      sameKey: false,
      actors: [
        { name: 'first', kind: 'pay' as const, key: 'k0' },
        { name: 'dup1', kind: 'pay' as const, key: 'k1' },
      ],
      steps: [
        { run: 'first', to: 'pay.beforeBank' as const },
        { strike: 'lease' as const },
        { run: 'dup1', to: 'reconcile.takeOver' as const },
        { run: 'first', to: 'pay.bank' as const },
        { run: 'dup1' },
      ],
    },
  })),
  {
    // The same race with the reconciler: the first attempt charged and told the customer PAID, while the
    // reconciler moved the order back to PENDING; the next payer claimed it and charged again.
    name: 'old 2: the reconciler must not release a claim its owner renewed and charged under',
    script: {
      layers: only('stateMachine'),
      sameKey: false,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0' },
        { name: 'rec1', kind: 'reconcile' },
        { name: 'dup1', kind: 'pay', key: 'k1' },
      ],
      steps: [
        { run: 'first', to: 'pay.beforeBank' },
        { strike: 'lease' },
        { run: 'rec1', to: 'reconcile.takeOver' },
        { run: 'first' },
        { run: 'rec1' },
        { run: 'dup1' },
      ],
    },
  },
  {
    // Layer 2 alone: the first attempt stalled past its lease; the retry (same key) took the key over and
    // charged; nothing renewed or fenced a Redis claim, and the first attempt charged too.
    name: 'old 3: layer 2 alone, a stalled attempt wakes up after the retry charged',
    script: {
      layers: only('requestKey'),
      sameKey: true,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0' },
        { name: 'dup1', kind: 'pay', key: 'k0' },
      ],
      steps: [{ run: 'first', to: 'pay.beforeBank' }, { strike: 'lease' }, { run: 'dup1' }, { run: 'first' }],
    },
  },
  {
    // The bank timed out before charging, and charged later. A duplicate found the order UNKNOWN, asked the
    // bank ("no charge" - yet), released it, claimed and charged; then the late charge landed: two.
    name: 'old 4: "no charge yet" is not "never charged"',
    script: {
      layers: only('stateMachine'),
      sameKey: false,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0', bank: 'lateCharge' },
        { name: 'dup1', kind: 'pay', key: 'k1' },
      ],
      steps: [{ run: 'first' }, { run: 'dup1' }],
    },
  },

  // ---- found in the second review (issue 24) ----
  ...[...DATABASE_CONFIGS, only('requestKey')].map((layers) => {
    const sameKey = !layers.stateMachine && !layers.uniqueConstraint;
    // The first attempt's charge timed out and lands late (the claim in doubt under fence 1; the bank has seen
    // token 1). dup1 took the claim over (fence 2) and died before it asked the bank. dup2 took dup1's claim
    // over (fence 3) and asked: the bank's highest token, 1, was below 2, so it concluded that nothing could
    // land, and charged; then the late charge landed. "Never seen" was judged against the claim just taken
    // over, not the first claim whose charge may still land.
    return {
      name: `new 1: the takeover of a takeover forgets the first charge in doubt (${label(layers)})`,
      script: {
        layers,
        sameKey,
        actors: [
          { name: 'first', kind: 'pay' as const, key: 'k0', bank: 'lateCharge' as const },
          { name: 'dup1', kind: 'pay' as const, key: sameKey ? 'k0' : 'k1' },
          { name: 'dup2', kind: 'pay' as const, key: sameKey ? 'k0' : 'k2' },
        ],
        steps: [
          { run: 'first' },
          { run: 'dup1', to: 'reconcile.bank' as const },
          { crash: 'dup1' },
          { strike: 'lease' as const },
          { run: 'dup2' },
        ],
      },
    };
  }),
  {
    // The same, through a restart: the reconciler took the claim in doubt over and the process died before
    // it asked the bank; at start-up the sweep took the dead claim over, judged "never seen" against the
    // reconciler's token, released the order at once, and the customer's next Pay charged again.
    name: 'new 1: a restart after a takeover, and the start-up sweep releases a charge in doubt (layers 3+4)',
    script: {
      layers: only('stateMachine', 'uniqueConstraint'),
      sameKey: false,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0', bank: 'lateCharge' },
        { name: 'rec1', kind: 'reconcile' },
      ],
      steps: [
        { run: 'first' },
        { run: 'rec1', to: 'reconcile.bank' },
        { strike: 'restart' },
        { run: 'boot' },
        { spawn: { name: 'dup1', kind: 'pay', key: 'k1' } },
        { run: 'dup1' },
      ],
    },
  },
  ...[only('requestKey'), only('bankKey')].map((layers) => ({
    // Layer 2 alone or layer 5 alone: the process died right after the charge, and no retry came. Nothing
    // kept the payment in doubt where the reconciler looks (orders by status, dedup rows): the order stayed
    // PENDING with a charge, for ever.
    name: `new 2: a charge with no outcome, and no retry (${label(layers)})`,
    script: {
      layers,
      sameKey: true,
      actors: [{ name: 'first', kind: 'pay' as const, key: 'k0' }],
      steps: [{ run: 'first', to: 'order.record' as const }, { crash: 'first' }],
    },
  })),
  ...[only('uniqueConstraint'), only('requestKey')].map((layers) => ({
    // Layer 4 alone (or layer 2 alone): the bank timed out, and its charge landed late; the doubt lived in the
    // dedup row (or the request key) while the order was PENDING. Retention, which spared only PROCESSING and UNKNOWN
    // orders, pruned the order with its dedup row and its charge.
    name: `new 3: retention prunes a payment in doubt (${label(layers)})`,
    script: {
      layers,
      sameKey: true,
      actors: [{ name: 'first', kind: 'pay' as const, key: 'k0', bank: 'lateCharge' as const }],
      steps: [{ run: 'first' }, { strike: 'retention' as const }],
    },
  })),
  {
    // Layer 4 alone, the order older than RETENTION_DAYS: a payment holds its dedup row and is at the bank's door,
    // nothing charged yet. Retention, blind to the row, prunes the order, and the payment charges one that is gone.
    name: 'new 3: retention prunes an order whose payment holds its dedup row at the bank’s door (layer 4 alone)',
    script: {
      layers: only('uniqueConstraint'),
      sameKey: true,
      actors: [{ name: 'first', kind: 'pay', key: 'k0' }],
      steps: [{ run: 'first', to: 'pay.bank' }, { strike: 'retention' }, { run: 'first' }],
    },
  },
  {
    // Layer 4 alone: the dedup table's cleanup removed the row of a PAID order that stayed, and the next
    // duplicate was let through and charged ("layer 3 still stops it" held only with layer 3 on).
    name: 'new 4: the dedup cleanup lets the next duplicate charge again (layer 4 alone)',
    script: {
      layers: only('uniqueConstraint'),
      sameKey: false,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0' },
        { name: 'dup1', kind: 'pay', key: 'k1' },
      ],
      steps: [{ run: 'first' }, { strike: 'dedupCleanup' }, { run: 'dup1' }],
    },
  },
  {
    // Layer 5 alone: three payments, one charge (the bank's key returned it to the other two), and each of them
    // recorded the outcome unguarded and wrote a payment.paid event: three events, three receipts.
    name: 'new 5: one charge, three payment.paid events and three receipts (layer 5 alone)',
    script: {
      layers: only('bankKey'),
      sameKey: false,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0' },
        { name: 'dup1', kind: 'pay', key: 'k1' },
        { name: 'dup2', kind: 'pay', key: 'k2' },
      ],
      steps: [{ run: 'first' }, { run: 'dup1' }, { run: 'dup2' }],
    },
  },
  ...[only('requestKey'), only('requestKey', 'stateMachine')].map((layers) => ({
    // A layer 2 claim renewed after a retry judged it dead was taken over anyway: the takeover script compared
    // the owner and the token, not the renewal it had judged. The bank's fence kept the money safe; the
    // renewed attempt lost its claim and answered "in progress" while the retry paid.
    name: `new 6: a renewed layer 2 claim is taken over (${label(layers)})`,
    script: {
      layers,
      sameKey: true,
      actors: [
        { name: 'first', kind: 'pay' as const, key: 'k0' },
        { name: 'dup1', kind: 'pay' as const, key: 'k0' },
      ],
      steps: [
        { run: 'first', to: 'pay.beforeBank' as const },
        { strike: 'lease' as const },
        { run: 'dup1', to: 'key.takeOver' as const },
        { run: 'first', to: 'pay.bank' as const },
        { run: 'dup1' },
        { run: 'first' },
      ],
    },
  })),
  {
    // Layer 4 alone: the first attempt renewed its claim, then paused past its lease again, at the bank's door; a
    // duplicate took the row over and paid. The bank checked its decline before the fence: the stale attempt
    // got a final DECLINED, and with layer 3 off it wrote DECLINED over the PAID order.
    name: 'new 6: a stale attempt’s DECLINED over a charge (layer 4 alone)',
    script: {
      layers: only('uniqueConstraint'),
      sameKey: false,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0', bank: 'decline' },
        { name: 'dup1', kind: 'pay', key: 'k1' },
      ],
      steps: [
        { run: 'first', to: 'pay.beforeBank' },
        { strike: 'lease' },
        { run: 'first', to: 'pay.bank' },
        { strike: 'lease' },
        { run: 'dup1' },
        { run: 'first' },
      ],
    },
  },
  // ---- found beside a second suite (2026-12-07): no double charge, an order held for nobody ----
  {
    // The first attempt claimed its key, and its order a lease later (a busy machine between the two). The retry
    // with its key found the key dead and the order live: it took the key over and was told "in progress". The
    // first woke a lease after that, renewed the order's claim (still its own), found its key taken over and
    // stopped before the bank; it answered still holding the order, and the next retry was "in progress" for
    // another lease (stall-takeover's All-on cell: no charge, "in progress").
    name: 'later 1: an attempt that lost its key while away gives back the order it still held (layers 2+3+4)',
    script: {
      layers: only('requestKey', 'stateMachine', 'uniqueConstraint'),
      sameKey: true,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0' },
        { name: 'dup1', kind: 'pay', key: 'k0' },
      ],
      steps: LOST_KEY_WHILE_AWAY,
    },
  },
  {
    // The first attempt, away for a lease before the bank, renewed its order's claim; its key's store then failed as
    // it renewed the key (Redis unreachable). The throw went through every guard as a crash does: the request was
    // told 503 and the order was left held, for a lease, by an attempt that had answered.
    name: 'later 2: an attempt whose key’s store fails as it renews it gives back the order (layers 2+3+4)',
    script: {
      layers: only('requestKey', 'stateMachine', 'uniqueConstraint'),
      sameKey: true,
      actors: [{ name: 'first', kind: 'pay', key: 'k0' }],
      steps: KEY_UNRENEWED,
    },
  },
  {
    // The first attempt's claim of its key was sent twice by the Redis client (its connection lost the answer): the
    // second run found the first run's claim and answered with the record. The attempt read it as another request's
    // claim, answered "in progress" against itself, and left the key held for a lease (decision 041).
    name: 'later 3: a claim of the key sent twice is the attempt’s own (layer 2 alone)',
    script: {
      layers: only('requestKey'),
      sameKey: true,
      actors: [{ name: 'first', kind: 'pay', key: 'k0', resendAt: { point: 'key.claim' } }],
      steps: [{ run: 'first' }],
    },
  },
  {
    // The first attempt died holding its key; a retry took the abandoned claim over, and the Redis client sent the
    // takeover twice. The second run found the claim no longer the one judged abandoned and said "someone else moved
    // first": the retry answered "in progress", holding the claim it had taken (decision 041).
    name: 'later 4: a takeover of the key sent twice is the taker’s own (layer 2 alone)',
    script: {
      layers: only('requestKey'),
      sameKey: true,
      actors: [
        { name: 'first', kind: 'pay', key: 'k0' },
        { name: 'retry', kind: 'pay', key: 'k0', resendAt: { point: 'key.takeOver' } },
      ],
      steps: [{ run: 'first', to: 'pay.bank' }, { crash: 'first' }, { strike: 'lease' }, { run: 'retry' }],
    },
  },
];
