// The named points of the payment pipeline, the defences and the recovery path where another actor may run:
// one before every operation on shared state (Redis, PostgreSQL, the bank) that acts on something read
// before it. The race explorer (test/races/) stops each actor at these points and decides who runs next;
// between two points an actor runs alone. In production nothing waits here (`at` is undefined).
// docs/decisions/012-fenced-recovery.md lists each point with the write it guards and what keeps it safe.
export const RACE_POINTS = [
  // ---- a payment attempt ----
  /** Layer 2: before the claim script (it claims the key, or returns the record another request left). */
  'key.claim',
  /** Layer 2: between reading an abandoned claim and the takeover script's compare-and-set on it. */
  'key.takeOver',
  /** Layer 2 alone, after asking the bank under a taken-over key: before it goes on to pay (the doubt cleared). */
  'key.resume',
  /** Layer 2: before renewing the key's claim (after a pause). */
  'key.renew',
  /** Layer 2: before storing the final outcome on the key. */
  'key.complete',
  /** Layer 2: before giving the key back (nothing moved). */
  'key.release',
  /** Layer 2: before keeping the key "unknown" (a charge may be in doubt). */
  'key.keepUnknown',
  /** Layers 3-4: before the claim statement (after layer 2 has claimed its key). */
  'order.claim',
  /** Layers 3-4: before renewing the database's claim (after a pause). */
  'order.renew',
  /** Between the bank's answer and recording it on the order (under the claim, or unguarded). */
  'order.record',
  /** Layers 3-4: before giving the database's claim back (nothing moved). */
  'order.release',
  /** Layers 3-4: before keeping the database's claim in doubt (the bank's answer is unknown). */
  'order.keepUnknown',
  /** A payment attempt holding its claims, before it checks them again (where a pause falls). */
  'pay.beforeBank',
  /** A payment attempt that has checked its claims, before the bank call (check-then-act lives here). */
  'pay.bank',
  /** A payment attempt whose bank call ended unknown, before it asks the bank what it charged. */
  'pay.confirm',
  // ---- the recovery path (the reconciler, or a duplicate reconciling) ----
  /** Before reading the order and its claims. */
  'reconcile.read',
  /** A final order whose dedup row has no outcome yet: before giving the row the order's outcome. */
  'reconcile.completeRow',
  /** Between judging a claim dead and the takeover's compare-and-set on it. */
  'reconcile.takeOver',
  /** A taker, before it asks the bank under its new fencing token. */
  'reconcile.bank',
  /** A taker with the bank's answer, before it settles, releases, resumes or leaves the claim in doubt. */
  'reconcile.write',
  // ---- the background sweep ----
  /** Before the sweep's query for dead claims. */
  'sweep.scan',
  /** Before the sweep reads the bank's settlement report (charges landed, recorded or not). */
  'sweep.report',
  /** Between the report and recording a charge that no order recorded. */
  'sweep.record',
] as const;
export type RacePoint = (typeof RACE_POINTS)[number];

/** Waits at a named point: the race explorer's hook, or nothing. */
export type RaceHook = (point: RacePoint) => Promise<void>;
