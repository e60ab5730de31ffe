// The real code held to the model's traces: a trace of the model checker (model/checker.ts) is replayed as a
// schedule of the real pipeline, reconciler and sweep against the real PostgreSQL and Redis. After every step
// the real actor must wait at the point where the model's does (or have ended where the model's has), and once
// the schedule is over and the sweep has settled, the real world must be the model's (charges, the order's
// status, its dedup row, the request keys, the events) and every payment must have been told what the model's
// was; then the real invariants are checked as for any schedule. A difference is a finding: a bug in the code,
// or in the model, and either way the exhaustive claim would not hold for the code.
import { decodeRecord } from '../../lib/defences/request-key/record.ts';
import { getRedis } from '../../lib/redis.ts';
import { type Finding, finish } from './explorer.ts';
import { type Cast, type Move, type Role, replay, type WorldSummary } from './model/checker.ts';
import { type ActorPlan, RaceWorld } from './world.ts';

function planOf(role: Role): ActorPlan {
  switch (role.kind) {
    case 'pay':
      return { name: role.name, kind: 'pay', key: role.plan.key, bank: role.plan.bank };
    case 'reconcile':
      return { name: role.name, kind: 'reconcile' };
    case 'sweep':
      return { name: role.name, kind: 'sweep' };
  }
}

function sameKeyOf(cast: Cast): boolean {
  return [...cast.roles, ...(cast.restart ?? [])].every((role) => role.kind !== 'pay' || role.plan.key === 'k0');
}

/**
 * Replays one model trace on the real code; its findings (none: undefined). `checkAtClaim`: the payments are
 * checked at their claim, the order not read first (world.ts); the model's trace is the same either way.
 */
export async function conform(cast: Cast, moves: Move[], checkAtClaim = false): Promise<Finding | undefined> {
  const model = replay(cast, moves);
  const world = await RaceWorld.create(cast.layers, sameKeyOf(cast), checkAtClaim);
  const { scheduler } = world;
  const problems: string[] = [];
  let next = 0;
  const held = (name: string) => {
    const expected = model.expected[next++];
    const real = scheduler.waitingAt(name) ?? null;
    if (!expected || expected.actor !== name || expected.point !== real) {
      problems.push(
        `step ${next}: ${name} waits at ${real ?? 'its end'}, the model's ${expected?.actor ?? 'nobody'} at ${expected?.point ?? 'its end'}`,
      );
    }
  };
  const begin = async (name: string) => {
    await scheduler.step(name); // from its start, as the model takes at once
    held(name);
  };
  try {
    for (const role of cast.roles) world.spawn(planOf(role));
    for (const role of cast.roles) await begin(role.name);
    for (const move of moves) {
      if (problems.length > 0) break;
      if ('step' in move) {
        await scheduler.step(move.step);
        held(move.step);
      } else if ('stop' in move) {
        for (const name of scheduler.waitingActors()) scheduler.crash(name);
      } else if (move.strike === 'restart') {
        await world.strike('restart');
        await begin('boot');
        for (const role of cast.restart ?? []) {
          world.spawn(planOf(role));
          await begin(role.name);
        }
      } else {
        await world.strike(move.strike);
      }
    }
    for (
      let waiting = scheduler.waitingActors()[0];
      waiting && problems.length === 0;
      waiting = scheduler.waitingActors()[0]
    ) {
      await scheduler.step(waiting);
      held(waiting);
    }
  } catch (error) {
    problems.push(`the real schedule broke off: ${(error as Error).message}`);
  }
  if (problems.length > 0) return { trace: scheduler.trace, violations: problems, ends: [] };
  return finish(world, sameKeyOf(cast), async (ends) => {
    const found: string[] = [];
    const real = await summaryOf(world, cast);
    if (JSON.stringify(real) !== JSON.stringify(model.end.world)) {
      found.push(`settled, the real world is ${JSON.stringify(real)}, the model's ${JSON.stringify(model.end.world)}`);
    }
    // Every payment's answer, and where every actor died (a reconciler's or a sweep's own answer is not told).
    for (const [name, said] of Object.entries(model.end.ends)) {
      if (name === 'last' || !(isPayer(cast, name) || said.startsWith('died'))) continue;
      if (said !== ends.get(name)) found.push(`${name} ended ${ends.get(name) ?? 'unknown'}, the model's ${said}`);
    }
    for (const violation of model.end.violations) found.push(`the model finds: ${violation}`);
    return found;
  });
}

function isPayer(cast: Cast, name: string): boolean {
  return [...cast.roles, ...(cast.restart ?? [])].some((role) => role.name === name && role.kind === 'pay');
}

/** The real world, read as the model summarizes its own (model/checker.ts summarize). */
async function summaryOf(world: RaceWorld, cast: Cast): Promise<WorldSummary> {
  const state = await world.read();
  const keys = [
    ...new Set(
      [...cast.roles, ...(cast.restart ?? [])].flatMap((role) => (role.kind === 'pay' ? [role.plan.key] : [])),
    ),
  ];
  keys.push('k0'); // the last retry's key
  const states: string[] = [];
  for (const key of [...new Set(keys)].sort()) {
    const raw = await getRedis().get(world.requestKeyName(key));
    const record = raw === null ? undefined : decodeRecord(raw);
    if (record) states.push(`${key}:${record.state}`);
  }
  const row = state.row;
  const rowOutcome = row?.outcome as { status?: string } | null | undefined;
  return {
    charges: state.charges.length,
    status: state.order?.status ?? 'gone',
    row: row ? (rowOutcome ? `outcome ${rowOutcome.status}` : 'in doubt') : 'none',
    keys: states.join(' '),
    events: state.events.length,
  };
}
