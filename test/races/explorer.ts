// The race explorer on the real code: a schedule is a configuration of layers 2-5, the actors (payment
// attempts with their bank faults, reconcilers, sweeps), where each may die (or a payment's store fail), the events that strike (the
// clock past a lease or the settlement window, a restart, Redis losing its keys, housekeeping), and the
// interleaving of all of them; or, for the regression cases, a script that says who runs to which point.
// After the schedule, time passes and the sweep settles; the invariants (world.ts) are checked, then the
// customer retries once more with the first key, and they are checked again.
import fc from 'fast-check';
import { RACE_POINTS, type RacePoint } from '../../lib/defences/race-points.ts';
import type { PayResult } from '../../lib/payments/pay.ts';
import { recordCoverage } from './coverage.ts';
import {
  type ActorPlan,
  BANK_FAULTS,
  type BankFault,
  EVENTS,
  FAIL_POINTS,
  type FailPoint,
  injectedFailure,
  RaceWorld,
  RESEND_POINTS,
  type ResendPoint,
  type ServerLayers,
  type WorldEvent,
} from './world.ts';

export type Schedule = {
  layers: ServerLayers;
  /** The first attempt's bank fault. */
  first: BankFault;
  /** Further payment attempts for the same order, 1-3. */
  duplicates: number;
  /** Each duplicate's bank fault, in spawning order ('none' where the list ends: schedules kept from before it). */
  duplicateBanks?: BankFault[];
  /** Whether the duplicates retry with the first attempt's key (one intent) or each bring their own. */
  sameKey: boolean;
  /** Whether the payments are checked at their claim, the order not read first (the lab off; world.ts). */
  checkAtClaim: boolean;
  /** Reconcilers (on demand) and background sweeps that run during the schedule. */
  reconcilers: number;
  sweeps: number;
  /** Actors that die on reaching a point (index in spawning order: the first, the duplicates, the others). */
  crashes: Array<{ actor: number; point: RacePoint }>;
  /** Payment attempts whose store fails at a point (index among the payments; none in schedules kept from before). */
  failures?: Array<{ actor: number; point: FailPoint }>;
  /** Payment attempts whose Redis command after a point is sent twice (none in schedules kept from before). */
  resends?: Array<{ actor: number; point: ResendPoint }>;
  /** What strikes, each at a moment the interleaving chooses. */
  events: WorldEvent[];
  /** The interleaving: which actor runs at each step (indices in spawning order, the events last). */
  choices: number[];
};

export type ScriptStep =
  /** Run the actor until it waits at the point (without one: to its end). */
  | { run: string; to?: RacePoint }
  /** The actor dies where it waits. */
  | { crash: string }
  /** The actor's store fails where it waits: it runs on, and the operation throws (run it on with `run`). */
  | { fail: string }
  | { strike: WorldEvent }
  /** A new actor arrives (after a restart, say). */
  | { spawn: ActorPlan };

export type Script = {
  layers: ServerLayers;
  actors: ActorPlan[];
  steps: ScriptStep[];
  /** Whether every payment of the script is one intent (one key). */
  sameKey: boolean;
  /** Whether the payments are checked at their claim (world.ts); not by default. */
  checkAtClaim?: boolean;
};

export type Finding = { trace: string[]; violations: string[]; ends: string[] };

/** Runs one random schedule; its findings (none: undefined). */
export async function runSchedule(schedule: Schedule): Promise<Finding | undefined> {
  const world = await RaceWorld.create(schedule.layers, schedule.sameKey, schedule.checkAtClaim);
  const plans: ActorPlan[] = [{ name: 'first', kind: 'pay', key: 'k0', bank: schedule.first }];
  for (let i = 1; i <= schedule.duplicates; i++) {
    const bank = schedule.duplicateBanks?.[i - 1] ?? 'none';
    plans.push({ name: `dup${i}`, kind: 'pay', key: schedule.sameKey ? 'k0' : `k${i}`, bank });
  }
  for (let i = 1; i <= schedule.reconcilers; i++) plans.push({ name: `rec${i}`, kind: 'reconcile' });
  for (let i = 1; i <= schedule.sweeps; i++) plans.push({ name: `sweep${i}`, kind: 'sweep' });
  for (const { actor, point } of schedule.crashes) {
    const plan = plans[actor % plans.length];
    if (plan && !plan.crashAt) plan.crashAt = { point };
  }
  for (const { actor, point } of schedule.failures ?? []) {
    const plan = plans[actor % (schedule.duplicates + 1)];
    if (plan && !plan.failAt) plan.failAt = { point };
  }
  for (const { actor, point } of schedule.resends ?? []) {
    const plan = plans[actor % (schedule.duplicates + 1)];
    if (plan && !plan.resendAt) plan.resendAt = { point };
  }
  for (const plan of plans) world.spawn(plan);
  // Housekeeping strikes between two steps of a payment only where a claim in PostgreSQL keeps the order (layer
  // 3 or 4): a payment that holds nothing there and has read its order could otherwise charge one that retention
  // pruned, had it paused for RETENTION_DAYS (lib/payments/retention.ts says so). Without them, after the actors.
  const anytime = schedule.layers.stateMachine || schedule.layers.uniqueConstraint;
  const housekeeping = (event: WorldEvent) => event === 'retention' || event === 'dedupCleanup';
  const during = schedule.events.filter((event) => anytime || !housekeeping(event));
  const after = schedule.events.filter((event) => !anytime && housekeeping(event));
  if (during.length > 0) {
    world.scheduler.spawn('events', async (at) => {
      for (const event of during) {
        await at(`event`);
        await world.strike(event);
      }
    });
  }
  try {
    await world.scheduler.runChoices(schedule.choices);
    for (const event of after) await world.strike(event);
  } catch (error) {
    return { trace: world.scheduler.trace, violations: [`stuck: ${(error as Error).message}`], ends: [] };
  }
  return finish(world, schedule.sameKey);
}

/** Runs one script: its steps, then every actor still waiting to its end; its findings (none: undefined). */
export async function runScript(script: Script): Promise<Finding | undefined> {
  const world = await RaceWorld.create(script.layers, script.sameKey, script.checkAtClaim);
  for (const plan of script.actors) world.spawn(plan);
  try {
    for (const step of script.steps) {
      if ('run' in step) await world.scheduler.runUntil(step.run, step.to);
      else if ('crash' in step) world.scheduler.crash(step.crash);
      else if ('fail' in step) world.scheduler.fail(step.fail);
      else if ('strike' in step) await world.strike(step.strike);
      else world.spawn(step.spawn);
    }
    await world.scheduler.drain();
  } catch (error) {
    return { trace: world.scheduler.trace, violations: [`script: ${(error as Error).message}`], ends: [] };
  }
  return finish(world, script.sameKey);
}

/**
 * After the schedule: time passes and the sweep settles; the invariants; one more retry; the invariants.
 * `settled`: more to check once the sweep has settled, before the last retry (the model's conformance).
 */
export async function finish(
  world: RaceWorld,
  sameKey: boolean,
  settled?: (ends: Map<string, string>) => Promise<string[]>,
): Promise<Finding | undefined> {
  recordCoverage(world.layers, world.scheduler.trace);
  const violations = [...world.violations];
  const told: PayResult[] = [];
  const ends: string[] = [];
  const endOf = new Map<string, string>();
  for (const [name, ended] of world.ends) {
    const end = await ended;
    if (end.kind === 'crashed') endOf.set(name, `died at ${end.point}`);
    else if (end.kind === 'threw' && injectedFailure(end.error)) {
      // Told its request failed (a 503), as the schedule meant; world.ts checked it holds no claim.
      endOf.set(name, `failed: ${end.error.message}`);
    } else if (end.kind === 'threw') {
      endOf.set(name, `threw ${(end.error as Error).message}`);
      violations.push(`${name} threw: ${(end.error as Error).message}`);
    } else if (isPayResult(end.value)) {
      told.push(end.value);
      endOf.set(name, inWords(end.value));
    }
    const words = endOf.get(name);
    if (words) ends.push(`${name}: ${words}`);
  }
  await world.settle();
  await world.deliverReceipts();
  violations.push(...(await world.check(told, 'after reconciliation', sameKey)));
  if (settled) violations.push(...(await settled(endOf)));
  // The customer retries once more, with the first key, as a well-behaved client would.
  const last = await world.pay('k0', undefined, 'none', 'last');
  ends.push(`last retry: ${inWords(last)}`);
  told.push(last);
  await world.settle();
  await world.deliverReceipts();
  violations.push(...(await world.check(told, 'after a last retry', sameKey)));
  // The intent of the first key is told the charge (unless its own first answer was a decline: that is what
  // its retries replay, whoever paid the order since).
  const state = await world.read();
  const declined = told.some(
    (result) => result.requestId === 'first' && 'outcome' in result && result.outcome.status === 'DECLINED',
  );
  if (state.order?.status === 'PAID' && world.bounded(sameKey) && !world.pruned && !declined) {
    const outcome = last.kind === 'completed' || last.kind === 'duplicate' ? last.outcome : undefined;
    if (outcome?.status !== 'PAID' || outcome.chargeId !== state.order.chargeId) {
      violations.push(`the last retry was told ${inWords(last)}, not the charge ${state.order.chargeId}`);
    }
  }
  return violations.length > 0 ? { trace: world.scheduler.trace, violations, ends } : undefined;
}

function isPayResult(value: unknown): value is PayResult {
  return typeof value === 'object' && value !== null && 'requestId' in value && 'kind' in value;
}

export function inWords(result: PayResult): string {
  const by = 'answeredBy' in result ? ` (${result.answeredBy})` : '';
  const outcome = 'outcome' in result ? ` ${result.outcome.status}` : '';
  return `${result.kind}${by}${outcome}`;
}

// ---- random schedules ---------------------------------------------------------------------------------

const layersArbitrary = fc.record({
  requestKey: fc.boolean(),
  stateMachine: fc.boolean(),
  uniqueConstraint: fc.boolean(),
  bankKey: fc.boolean(),
});

export const scheduleArbitrary: fc.Arbitrary<Schedule> = fc.record({
  layers: layersArbitrary,
  first: fc.constantFrom(...BANK_FAULTS),
  duplicates: fc.integer({ min: 1, max: 3 }),
  // Most duplicates' calls (three in five) go to a bank that behaves, so that the first attempt's faults still meet them.
  duplicateBanks: fc.array(fc.oneof(fc.constant<BankFault>('none'), fc.constantFrom(...BANK_FAULTS)), {
    minLength: 3,
    maxLength: 3,
  }),
  sameKey: fc.boolean(),
  checkAtClaim: fc.boolean(),
  reconcilers: fc.integer({ min: 0, max: 2 }),
  sweeps: fc.integer({ min: 0, max: 1 }),
  crashes: fc.array(fc.record({ actor: fc.nat({ max: 6 }), point: fc.constantFrom(...RACE_POINTS) }), { maxLength: 2 }),
  failures: fc.array(fc.record({ actor: fc.nat({ max: 3 }), point: fc.constantFrom(...FAIL_POINTS) }), {
    maxLength: 1,
  }),
  resends: fc.array(fc.record({ actor: fc.nat({ max: 3 }), point: fc.constantFrom(...RESEND_POINTS) }), {
    maxLength: 1,
  }),
  events: fc.array(fc.constantFrom<WorldEvent>(...EVENTS), { maxLength: 3 }),
  choices: fc.array(fc.nat({ max: 7 }), { minLength: 1, maxLength: 64 }),
});

/** Schedules, with some of their fields fixed (a configuration to explore, a fault to aim at). */
export function schedulesWith(fixed: Partial<Schedule> = {}): fc.Arbitrary<Schedule> {
  return scheduleArbitrary.map((schedule) => ({ ...schedule, ...fixed }));
}

/** Runs `count` random schedules, `lanes` at a time; returns the first findings (shrunk) and the pace. */
export async function explore(options: {
  count: number;
  lanes?: number;
  seed?: number;
  fixed?: Partial<Schedule>;
}): Promise<{
  schedules: number;
  seconds: number;
  failures: Array<{ seed: number; schedule: Schedule; finding: Finding }>;
}> {
  const lanes = options.lanes ?? 6;
  const baseSeed = options.seed ?? Date.now() % 1_000_000_007;
  const started = performance.now();
  let schedules = 0;
  const failures: Array<{ seed: number; schedule: Schedule; finding: Finding }> = [];
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      const seed = baseSeed + lane;
      // Every failing schedule's finding, as first seen: a counterexample that does not fail again when it is
      // replayed is reported with it (the explorer must be deterministic; that would be a finding of its own).
      const seen = new Map<string, Finding>();
      const result = await fc.check(
        fc.asyncProperty(schedulesWith(options.fixed), async (schedule) => {
          schedules++;
          const finding = await runSchedule(schedule);
          if (finding) seen.set(JSON.stringify(schedule), finding);
          return finding === undefined;
        }),
        { numRuns: Math.ceil(options.count / lanes), seed, endOnFailure: false, maxSkipsPerRun: 0 },
      );
      if (result.failed && result.counterexample) {
        const [schedule] = result.counterexample;
        const again = await runSchedule(schedule);
        const first = seen.get(JSON.stringify(schedule));
        const finding = again ?? {
          trace: first?.trace ?? [],
          violations: [...(first?.violations ?? []), 'the schedule did not fail again when replayed'],
          ends: first?.ends ?? [],
        };
        failures.push({ seed, schedule, finding });
      }
    }),
  );
  return { schedules, seconds: (performance.now() - started) / 1000, failures };
}
