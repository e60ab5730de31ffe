// The exhaustive mode's bound: for each configuration of layers 2-5 that the proof matrix declares safe, the
// casts the model checker explores completely (checker.ts). Said in docs/decisions/012-fenced-recovery.md; the
// numbers `npm run races` prints are per configuration, summed over these casts.
//
//   actors   the first attempt (key k0) with one bank fault or none, a duplicate (the same key, or its own
//            where layer 2 is on with a database layer or the bank's key), and the reconciler; or, instead of
//            the duplicate's running beside them, a restart: it kills every actor, and the duplicate arrives in
//            the new life beside the start-up sweep. Running beside the first, the duplicate has a bank fault
//            of its own or none, whatever the first's: both calls may be faulty (a taker whose own call times
//            out, fails or is declined; two calls in doubt at once)
//   faults   any actor dies at any point, holding its claims (one "stop" move covers them all); the clock jumps
//            past the lease once, at any moment (a pause of whoever waits then); Redis loses every key once, at
//            any moment (where layer 2 is on beside a layer that survives it), with the bank's faults that leave
//            a charge in doubt
//   after    time passes past the settlement window, the sweep settles, the customer retries with the first
//            key, and every invariant is checked
import type { Layers } from './actors.ts';
import type { Cast, Role } from './checker.ts';
import type { BankFault } from './world.ts';

export const FIRST_BANK_FAULTS: BankFault[] = ['none', 'lateCharge', 'timeoutAfterCharge', 'bankError', 'decline'];
/** The duplicate's, beside the first: the same five. */
const DUPLICATE_BANK_FAULTS = FIRST_BANK_FAULTS;
/** The bank faults that leave a charge in doubt: combined with Redis losing its keys. */
const IN_DOUBT: BankFault[] = ['none', 'lateCharge', 'timeoutAfterCharge'];

export type Configuration = { name: string; layers: Layers };

const NUMBER = { requestKey: 2, stateMachine: 3, uniqueConstraint: 4, bankKey: 5 } as const;

/** Every configuration of layers 2-5 the matrix declares safe (layer 2 alone: for one key). */
export function safeConfigurations(): Configuration[] {
  const configurations: Configuration[] = [];
  for (let bits = 1; bits < 16; bits++) {
    const layers: Layers = {
      requestKey: (bits & 1) !== 0,
      stateMachine: (bits & 2) !== 0,
      uniqueConstraint: (bits & 4) !== 0,
      bankKey: (bits & 8) !== 0,
    };
    const on = (Object.keys(NUMBER) as Array<keyof Layers>).filter((layer) => layers[layer]);
    configurations.push({ name: on.map((layer) => NUMBER[layer]).join('+'), layers });
  }
  return configurations;
}

/** The casts of one configuration. */
export function castsOf(layers: Layers): Cast[] {
  const survives = layers.stateMachine || layers.uniqueConstraint || layers.bankKey;
  // Layer 2 alone promises one charge per key: the duplicate retries with the first key. Without layer 2 the
  // key makes no difference; with it and another layer, the duplicate brings its own too.
  const duplicateKeys = layers.requestKey && survives ? ['k0', 'k1'] : layers.requestKey ? ['k0'] : ['k1'];
  const casts: Cast[] = [];
  const common = { layers, leaseTicks: 1, windowTicks: 0 };
  const reconciler: Role = { name: 'rec1', kind: 'reconcile' };
  for (const bank of FIRST_BANK_FAULTS) {
    const first: Role = { name: 'first', kind: 'pay', plan: { key: 'k0', bank } };
    for (const key of duplicateKeys) {
      // Each configuration's first cast is the first attempt and a duplicate both without a fault (npm test's
      // sample of traces is taken from it: races.int.test.ts).
      for (const its of DUPLICATE_BANK_FAULTS) {
        const beside: Role = { name: 'dup1', kind: 'pay', plan: { key, bank: its } };
        casts.push({ ...common, roles: [first, beside, reconciler], flushRedis: false });
      }
      const duplicate: Role = { name: 'dup1', kind: 'pay', plan: { key, bank: 'none' } };
      casts.push({ ...common, roles: [first, reconciler], restart: [duplicate], flushRedis: false });
      if (layers.requestKey && survives && IN_DOUBT.includes(bank)) {
        casts.push({ ...common, roles: [first, duplicate, reconciler], flushRedis: true });
      }
    }
  }
  return casts;
}

/** A cast in words, for the printed counts and for a counterexample. */
export function castInWords(cast: Cast): string {
  const roles = (roles: Role[]) =>
    roles
      .map((role) =>
        role.kind === 'pay'
          ? `${role.name}(${role.plan.key}${role.plan.bank === 'none' ? '' : `, ${role.plan.bank}`})`
          : role.name,
      )
      .join(' ');
  const restart = cast.restart ? ` | restart → boot ${roles(cast.restart)}` : '';
  return `${roles(cast.roles)}${restart}${cast.flushRedis ? ' | Redis loses its keys' : ''}`;
}
