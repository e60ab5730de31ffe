// The race explorer: the real pipeline and the real reconciler, against the real PostgreSQL and Redis,
// driven through their named points (lib/payments/race-points.ts) by a seeded scheduler. A schedule is a
// configuration of the defences, a fault for the first attempt, its duplicates, a reconciler, the clock's
// jumps (past a lease, past the bank's settlement window) and the list of choices that interleaves them.
// After the schedule, time passes, the reconciler runs, and the invariants of the mission are checked:
//   - at most one charge per order when layer 3, 4 or 5 is on (layer 2 alone: per key);
//   - nobody is told PAID without a charge;
//   - every order settles: a charge means a PAID order naming it, no charge means no claim left.
import fc from 'fast-check';
import { getDb } from '../../lib/db.ts';
import { ALL_LAYERS_OFF, BANK_SETTLEMENT_WINDOW_MS, type Faults } from '../../lib/lab/settings.ts';
import { createOrder } from '../../lib/payments/orders.ts';
import { parseOutcome } from '../../lib/payments/outcome.ts';
import { defaultPayOptions, type PayOptions, type PayResult, pay } from '../../lib/payments/pay.ts';
import type { RaceHook } from '../../lib/payments/race-points.ts';
import { reconcileOrder } from '../../lib/payments/reconcile.ts';
import { clientScope } from '../../lib/session.ts';
import { type ActorEnd, RaceScheduler } from './scheduler.ts';

/** The defences that act on the server (the token and the pending UI belong to a page). */
export const SERVER_LAYERS = ['requestKey', 'stateMachine', 'uniqueConstraint', 'bankKey'] as const;
export type ServerLayer = (typeof SERVER_LAYERS)[number];

/** What happens to the first attempt. */
export const FIRST_FAULTS = [
  'none',
  /** The bank answers "timeout" before it charges; the charge lands LATE_CHARGE_MS later. */
  'lateCharge',
  /** The process dies holding its claims, before the bank. */
  'crashBeforeCharge',
  /** The process dies right after the bank charged. */
  'crashAfterCharge',
  /** The bank charges, then the answer times out. */
  'timeoutAfterCharge',
  /** The bank fails before charging (nothing moved). */
  'bankError',
] as const;
export type FirstFault = (typeof FIRST_FAULTS)[number];

export type Schedule = {
  layers: Record<ServerLayer, boolean>;
  first: FirstFault;
  /** Further payment attempts for the same order, 1-3. */
  duplicates: number;
  /** Whether the duplicates retry with the first attempt's key (one intent) or each bring their own. */
  sameKey: boolean;
  /** How many reconcilers run during the schedule, 0-2 (two instances' sweeps overlap; duplicates reconcile too). */
  reconcilers: number;
  /** The clock's jumps, each at a moment the scheduler chooses: past the lease, or past the bank's window. */
  ticks: Array<'lease' | 'window'>;
  /** The interleaving: which actor runs at each step (indices in spawning order). */
  choices: number[];
};

/** What every schedule must end with (checked after time has passed and the reconciler has run). */
export const INVARIANTS = [
  'at most one charge per order when layer 3, 4 or 5 is on (layer 2 alone: per key)',
  'nobody is told PAID without a charge',
  'a charge ends in a PAID order naming it, its dedup row agreeing',
  'no charge ends with no claim left',
];

export const LEASE_MS = 100;
export const LATE_CHARGE_MS = 2_000;

export type Finding = { schedule: Schedule; trace: string[]; violations: string[]; ends: string[] };

/** The process "dies" here: the pipeline must not run another line of its own after it. */
class SimulatedCrash extends Error {}

const FAULTS: Record<FirstFault, Partial<Faults>> = {
  none: {},
  lateCharge: { bankLateChargeMs: LATE_CHARGE_MS },
  crashBeforeCharge: { crashBeforeCharge: true },
  crashAfterCharge: { crashAfterCharge: true },
  timeoutAfterCharge: { bankTimeoutAfterCharge: true },
  bankError: { bankFailure: 'error' },
};

/** Schedules, with some of their fields fixed (a configuration to explore, a fault to aim at). */
export function schedulesWith(fixed: Partial<Schedule> = {}): fc.Arbitrary<Schedule> {
  return scheduleArbitrary.map((schedule) => ({ ...schedule, ...fixed }));
}

export const scheduleArbitrary: fc.Arbitrary<Schedule> = fc.record({
  layers: fc.record({
    requestKey: fc.boolean(),
    stateMachine: fc.boolean(),
    uniqueConstraint: fc.boolean(),
    bankKey: fc.boolean(),
  }),
  first: fc.constantFrom(...FIRST_FAULTS),
  duplicates: fc.integer({ min: 1, max: 3 }),
  sameKey: fc.boolean(),
  reconcilers: fc.integer({ min: 0, max: 2 }),
  ticks: fc.array(fc.constantFrom<'lease' | 'window'>('lease', 'window'), { maxLength: 2 }),
  choices: fc.array(fc.nat({ max: 6 }), { minLength: 1, maxLength: 48 }),
});

/** Runs one schedule and returns what it broke (nothing: undefined). */
export async function runSchedule(schedule: Schedule): Promise<Finding | undefined> {
  // A virtual clock, from now on: every lease, every window and the bank's statement are judged by it.
  const clock = { now: Date.now() };
  const now = () => clock.now;
  const layers = { ...ALL_LAYERS_OFF, ...schedule.layers };
  const { orderNo } = await createOrder({ lab: { layers, claims: { leaseMs: LEASE_MS } } });
  const caller = clientScope(`race-${orderNo}`);
  const scheduler = new RaceScheduler(schedule.choices);

  const publish = () => {};
  const payOptions = (at: RaceHook | undefined, faults: Partial<Faults>): PayOptions => ({
    ...defaultPayOptions(),
    now,
    at,
    faults,
    publish,
    crash: () => {
      throw new SimulatedCrash();
    },
  });
  const payWith = (key: string, at: RaceHook | undefined, faults: Partial<Faults> = {}) =>
    pay({ orderNo, caller, channel: 'api', idempotencyKey: key, amountCents: 4_200 }, payOptions(at, faults));

  const payments: Array<Promise<ActorEnd<PayResult>>> = [];
  payments.push(scheduler.spawn('first', (at) => payWith('k0', at, FAULTS[schedule.first])));
  for (let i = 1; i <= schedule.duplicates; i++) {
    payments.push(scheduler.spawn(`dup${i}`, (at) => payWith(schedule.sameKey ? 'k0' : `k${i}`, at)));
  }
  const others: Array<Promise<ActorEnd<unknown>>> = [];
  for (let i = 1; i <= schedule.reconcilers; i++) {
    others.push(scheduler.spawn(`rec${i}`, (at) => reconcileOrder(orderNo, { leaseMs: LEASE_MS, now, at, publish })));
  }
  if (schedule.ticks.length > 0) {
    others.push(
      scheduler.spawn('time', async (at) => {
        for (const tick of schedule.ticks) {
          await at('tick');
          const jump = tick === 'lease' ? LEASE_MS + 1 : BANK_SETTLEMENT_WINDOW_MS + 1;
          clock.now += jump;
        }
      }),
    );
  }

  const violations: string[] = [];
  try {
    await scheduler.run();
  } catch (error) {
    violations.push(`stuck: ${(error as Error).message}`);
    return { schedule, trace: scheduler.trace, violations, ends: [] };
  }
  const ends = await Promise.all(payments);
  const endsInWords = ends.map((end, i) =>
    end.kind === 'threw'
      ? `${i === 0 ? 'first' : `dup${i}`}: threw ${(end.error as Error).constructor.name}`
      : `${i === 0 ? 'first' : `dup${i}`}: ${end.value.kind}${'answeredBy' in end.value ? ` (${end.value.answeredBy})` : ''}${'outcome' in end.value ? ` ${end.value.outcome.status}` : ''}`,
  );
  for (const end of [...ends, ...(await Promise.all(others))]) {
    if (end.kind === 'threw' && !(end.error instanceof SimulatedCrash)) {
      violations.push(`an actor threw: ${(end.error as Error).message}`);
    }
  }

  // Time passes (every late charge lands, every lease runs out), and the reconciler runs to quiescence.
  clock.now += BANK_SETTLEMENT_WINDOW_MS + LEASE_MS + 1;
  const settle = async () => {
    // The reconciler runs until it has nothing left to do; while a holder's lease or the bank's settlement
    // window has to run out first, time passes for that long.
    for (let round = 0; round < 6; round++) {
      const reconciled = await reconcileOrder(orderNo, { leaseMs: LEASE_MS, now, publish });
      if (reconciled.kind === 'waiting') clock.now += reconciled.retryAfterMs + 1;
      else if (reconciled.kind === 'running') clock.now += LEASE_MS + 1;
      else if (reconciled.kind !== 'released') break;
    }
  };
  await settle();
  const told = ends.flatMap((end) => (end.kind === 'returned' ? [end.value] : []));
  const databaseLayer = layers.stateMachine || layers.uniqueConstraint;
  if (databaseLayer) violations.push(...(await settledViolations(orderNo, 'after reconciliation')));
  // And the customer retries once more, with the first key, as a well-behaved client would.
  told.push(await payWith('k0', undefined));
  await settle();
  violations.push(...(await settledViolations(orderNo, 'after a last retry')));

  const charges = await chargesOf(orderNo);
  for (const result of told) {
    const outcome = result.kind === 'completed' || result.kind === 'duplicate' ? result.outcome : undefined;
    if (outcome?.status === 'PAID' && !charges.includes(outcome.chargeId)) {
      violations.push(`told PAID with ${outcome.chargeId}, which the bank never charged`);
    }
  }
  const bounded = databaseLayer || layers.bankKey || (layers.requestKey && schedule.sameKey);
  if (bounded && charges.length > 1) violations.push(`${charges.length} charges for one order`);

  const last = told.at(-1);
  if (last) endsInWords.push(`last retry: ${last.kind}${'outcome' in last ? ` ${last.outcome.status}` : ''}`);
  return violations.length > 0 ? { schedule, trace: scheduler.trace, violations, ends: endsInWords } : undefined;
}

async function chargesOf(orderNo: string): Promise<string[]> {
  const rows = await getDb().bankCharge.findMany({ where: { merchantRef: orderNo }, select: { id: true } });
  return rows.map((row) => row.id);
}

/** A charge means a PAID order naming it (and a dedup row agreeing); no charge means no claim is left. */
async function settledViolations(orderNo: string, when: string): Promise<string[]> {
  const db = getDb();
  const [order, row, charges] = await Promise.all([
    db.order.findUniqueOrThrow({ where: { orderNo }, select: { status: true, chargeId: true } }),
    db.idempotentRecord.findUnique({
      where: { bizType_bizNo: { bizType: 'PAYMENT', bizNo: orderNo } },
      select: { outcome: true },
    }),
    chargesOf(orderNo),
  ]);
  const found: string[] = [];
  const rowOutcome = row ? parseOutcome(row.outcome) : undefined;
  if (charges.length > 0) {
    if (order.status !== 'PAID' || !order.chargeId || !charges.includes(order.chargeId)) {
      found.push(`${when}: the bank charged, but the order is ${order.status} (${order.chargeId ?? 'no charge'})`);
    }
    if (row && rowOutcome?.status === 'PAID' && rowOutcome.chargeId !== order.chargeId) {
      found.push(`${when}: the order names ${order.chargeId}, its dedup row ${rowOutcome.chargeId}`);
    }
  } else {
    if (order.status !== 'PENDING' && order.status !== 'DECLINED') {
      found.push(`${when}: no charge, and the order is ${order.status}`);
    }
    if (order.status === 'PAID') found.push(`${when}: PAID without a charge`);
  }
  if (row && !rowOutcome && order.status !== 'PENDING') found.push(`${when}: a dedup row without an outcome is left`);
  if (row && !rowOutcome && charges.length === 0) found.push(`${when}: a dedup row without an outcome is left`);
  return found;
}

/** Runs `count` random schedules, `lanes` at a time; returns the first findings (shrunk) and the pace. */
export async function explore(options: {
  count: number;
  lanes?: number;
  seed?: number;
  fixed?: Partial<Schedule>;
}): Promise<{ schedules: number; seconds: number; failures: Array<{ seed: number; finding: Finding }> }> {
  const lanes = options.lanes ?? 6;
  const baseSeed = options.seed ?? Date.now() % 1_000_000_007;
  const started = performance.now();
  let schedules = 0;
  const failures: Array<{ seed: number; finding: Finding }> = [];
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      const seed = baseSeed + lane;
      let last: Finding | undefined;
      const result = await fc.check(
        fc.asyncProperty(schedulesWith(options.fixed), async (schedule) => {
          schedules++;
          last = await runSchedule(schedule);
          return last === undefined;
        }),
        { numRuns: Math.ceil(options.count / lanes), seed, endOnFailure: false, maxSkipsPerRun: 0 },
      );
      if (result.failed && result.counterexample) {
        const finding = await runSchedule(result.counterexample[0]);
        failures.push({
          seed,
          finding: finding ?? last ?? { schedule: result.counterexample[0], trace: [], violations: [], ends: [] },
        });
      }
    }),
  );
  return { schedules, seconds: (performance.now() - started) / 1000, failures };
}
