// The named points of the payment pipeline and the reconciler where another actor may run: the race
// explorer (test/races/) stops each actor at these points and lets a seeded scheduler decide who runs next.
// In production nothing waits here.
export const RACE_POINTS = [
  /** A payment attempt, before it claims anything (request key, order, dedup row). */
  'pay.claim',
  /** A payment attempt holding its claims, before it checks them again (where a stall falls). */
  'pay.beforeBank',
  /** A payment attempt that has checked its claims, before the bank call (check-then-act lives here). */
  'pay.bank',
  /** A payment attempt whose bank call timed out, before it asks the bank what it charged. */
  'pay.confirm',
  /** A payment attempt that has the bank's answer, before it records the outcome. */
  'pay.afterBank',
  /** The reconciler (or a duplicate reconciling), after it read the order and its claims. */
  'reconcile.read',
  /** The reconciler, before it asks the bank. */
  'reconcile.bank',
  /** The reconciler, with the bank's answer, before it settles or releases. */
  'reconcile.write',
] as const;
export type RacePoint = (typeof RACE_POINTS)[number];

/** Waits at a named point: the race explorer's hook, or nothing. */
export type RaceHook = (point: RacePoint) => Promise<void>;
