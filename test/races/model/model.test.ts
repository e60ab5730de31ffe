// The protocol model's checker, on small casts: the protocol as built holds every invariant in every
// interleaving; the same protocol broken the way it once was (defect 1, a bank that ignores fencing tokens)
// does not, and the checker says how.
import { afterEach, describe, expect, it } from 'vitest';
import { castsOf, safeConfigurations } from './bound.ts';
import { type Cast, explore, replay } from './checker.ts';
import { MODEL_BUGS } from './world.ts';

const layers = { requestKey: false, stateMachine: true, uniqueConstraint: false, bankKey: false };
const lateCharge: Cast = {
  layers,
  roles: [
    { name: 'first', kind: 'pay', plan: { key: 'k0', bank: 'lateCharge' } },
    { name: 'dup1', kind: 'pay', plan: { key: 'k1', bank: 'none' } },
    { name: 'rec1', kind: 'reconcile' },
  ],
  flushRedis: false,
  leaseTicks: 1,
  windowTicks: 0,
};

afterEach(() => MODEL_BUGS.clear());

// Each exploration is pure CPU: a second or two alone, many times that on a machine busy with other work. The
// bound guards against a hang; it is not a measure of speed.
describe('the protocol model', { timeout: 120_000 }, () => {
  it('holds every invariant in every interleaving of a cast, and counts what it explored', () => {
    const explored = explore(lateCharge);
    expect(explored.counterexample).toBeUndefined();
    expect(explored.states).toBeGreaterThan(1_000);
    expect(explored.interleavings).toBeGreaterThan(explored.states);
    expect(explored.pairs.has('reconcile.takeOver → reconcile.bank')).toBe(true);
  });

  it('finds the takeover of a takeover that charges twice, when "never seen" is judged against the last claim', () => {
    MODEL_BUGS.add('judgeLastClaim');
    const explored = explore(lateCharge);
    expect(explored.counterexample?.end.violations).toContain('after reconciliation: 2 charges for one order');
    // Its moves replay to the same end: a trace the real code can be held to.
    const { end } = replay(lateCharge, explored.counterexample?.moves ?? []);
    expect(end.violations).toEqual(explored.counterexample?.end.violations);
  });

  it('finds the stale attempt that charges after a takeover, when the bank ignores fencing tokens', () => {
    MODEL_BUGS.add('bankIgnoresFence');
    const explored = explore({
      ...lateCharge,
      roles: lateCharge.roles.map((role) =>
        role.kind === 'pay' ? { ...role, plan: { ...role.plan, bank: 'none' } } : role,
      ),
    });
    expect(
      explored.counterexample?.end.violations.some((violation) => violation.includes('charges for one order')),
    ).toBe(true);
  });

  it('bounds every configuration the matrix declares safe, with a duplicate of its own key where layer 2 alone', () => {
    const configurations = safeConfigurations();
    expect(configurations).toHaveLength(15);
    const alone = castsOf({ requestKey: true, stateMachine: false, uniqueConstraint: false, bankKey: false });
    expect(
      alone.every((cast) =>
        [...cast.roles, ...(cast.restart ?? [])].every((role) => role.kind !== 'pay' || role.plan.key === 'k0'),
      ),
    ).toBe(true);
    expect(
      castsOf({ requestKey: true, stateMachine: true, uniqueConstraint: false, bankKey: false }).some(
        (cast) => cast.flushRedis,
      ),
    ).toBe(true);
  });
});
