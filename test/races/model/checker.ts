// The protocol model's checker: for one configuration of layers 2-5 and one cast (the first attempt, a
// duplicate, and a reconciler, a sweep or a restart, each with at most one fault), every interleaving of their
// steps, of the clock jumping past a lease or the settlement window, of Redis losing its keys and of crashes,
// explored depth-first. A state is the world and every actor's history (an actor is a deterministic function of
// what its operations returned, so equal histories are equal actors): a state reached twice is explored once.
// Every end is settled (time passes, the sweep runs) and held to the invariants; a path to it is a trace the
// real code can be made to follow (conformance.ts).
import {
  type Actor,
  type Answer,
  type Context,
  type Layers,
  type Op,
  type PayPlan,
  pay,
  type Resumed,
  reconcile,
  sweep,
} from './actors.ts';
import { type BankFault, cloneWorld, LEASE_MS, newWorld, type Outcome, WINDOW_MS, type World } from './world.ts';

/** Who takes part. */
export type Role =
  | { name: string; kind: 'pay'; plan: PayPlan }
  | { name: string; kind: 'reconcile' }
  | { name: string; kind: 'sweep'; startup?: boolean };

/** One configuration's cast and what may strike. */
export type Cast = {
  layers: Layers;
  roles: Role[];
  /**
   * The process may restart once: it kills every actor (their claims stay), and the start-up sweep runs in
   * the new life beside these roles, which arrive then (a customer's next Pay, say).
   */
  restart?: Role[];
  /** Whether Redis may lose its keys once. */
  flushRedis: boolean;
  /** How many times the clock may jump past a lease, and past the settlement window. */
  leaseTicks: number;
  windowTicks: number;
};

type Entry = Resumed & { life: number };
type ActorState = {
  role: Role;
  history: Entry[];
  /** A hash of the history (what the state's key uses: equal histories, equal actors). */
  digest: string;
  /** The point it waits at; null once it has ended or died. */
  point: string | null;
  ended?: { answer: unknown } | { crashedAt: string };
  /** The life it was spawned in (a boot sweep's is the new one). */
  bornIn: number;
};

export type Move =
  | { step: string }
  /**
   * Every actor still waiting dies where it waits. One move stands for any crash: an actor that dies at a point
   * does nothing more, which is what it does while it waits there and the others run on, so "A dies at p, then
   * B runs" reaches the same worlds as "B runs while A waits at p, then A dies". A crashed actor's claims stay.
   */
  | { stop: true }
  | { strike: 'lease' | 'window' | 'flushRedis' | 'restart' };

type State = {
  world: World;
  actors: ActorState[];
  life: number;
  leaseTicks: number;
  windowTicks: number;
  flushRedis: number;
  restart: number;
  /** Invariants broken on the way (a takeover of a live claim, a decline over a charge). */
  broken: string[];
  /** Per actor, whether the order was PAID when it called the bank. */
  paidAtBank: Record<string, boolean>;
};

// ---- running actors ------------------------------------------------------------------------------------------

function contextFor(name: string, layers: Layers, clock: { entry: Entry; ids: number }): Context {
  return {
    name,
    layers,
    now: () => clock.entry.now,
    newId: () => `${name}.${clock.entry.life}.${++clock.ids}`,
  };
}

function spawnActor(role: Role, layers: Layers, context: Context, life: number): Actor<unknown> {
  switch (role.kind) {
    case 'pay':
      return pay(context, role.plan);
    case 'reconcile':
      return (function* () {
        yield { point: 'start', apply: () => undefined } as Op;
        return yield* reconcile(context);
      })();
    case 'sweep':
      return (function* () {
        yield { point: 'start', apply: () => undefined } as Op;
        const dead = role.startup ? (holder: string) => Number(holder.split('.')[1]) < life : undefined;
        return yield* sweep(context, dead && { dead });
      })();
  }
  void layers;
}

/** The actor as it is now: its generator replayed through its history, and the operation it waits to run. */
function revive(
  actor: ActorState,
  layers: Layers,
): { generator: Actor<unknown>; pending: Op | undefined; clock: { entry: Entry; ids: number } } {
  const clock = { entry: { result: undefined, now: 0, life: actor.bornIn } as Entry, ids: 0 };
  const generator = spawnActor(actor.role, layers, contextFor(actor.role.name, layers, clock), actor.bornIn);
  let next = generator.next(undefined as unknown as Resumed);
  for (const entry of actor.history) {
    clock.entry = entry;
    next = generator.next(entry);
  }
  return { generator, pending: next.done ? undefined : next.value, clock };
}

function newState(cast: Cast): State {
  const state: State = {
    world: newWorld(),
    actors: [],
    life: 0,
    leaseTicks: cast.leaseTicks,
    windowTicks: cast.windowTicks,
    flushRedis: cast.flushRedis ? 1 : 0,
    restart: cast.restart ? 1 : 0,
    broken: [],
    paidAtBank: {},
  };
  for (const role of cast.roles) state.actors.push(spawn(role, cast.layers, 0));
  return pastStart(state, cast.layers, 0);
}

/**
 * A start changes nothing and reads nothing that can change: every actor begins past it (the traces given to
 * the real code put the starts back, first).
 */
function pastStart(state: State, layers: Layers, from: number): State {
  state.actors = state.actors.map((actor, index) =>
    index >= from && actor.point === 'start' ? stepActor(state, actor, layers) : actor,
  );
  return state;
}

function spawn(role: Role, layers: Layers, life: number): ActorState {
  const actor: ActorState = { role, history: [], digest: '', point: null, bornIn: life };
  actor.point = revive(actor, layers).pending?.point ?? null;
  return actor;
}

/** The moves open in a state (none: it is an end). */
export function movesOf(state: State): Move[] {
  const waiting = state.actors.filter((actor) => actor.point !== null);
  if (waiting.length === 0) return [];
  const moves: Move[] = waiting.map((actor) => ({ step: actor.role.name }));
  if (waiting.some((actor) => actor.point !== 'start')) moves.push({ stop: true });
  // The clock jumping when nothing in the world is stamped with a time a jump could change a judgement of (no
  // claim, no key in flight, no charge still to land), or Redis losing keys it does not have, leads to a copy of
  // what not striking leads to (with the strike still to come): they are left out.
  const timed = timeMatters(state.world);
  if (state.leaseTicks > 0 && timed) moves.push({ strike: 'lease' });
  if (state.windowTicks > 0 && timed) moves.push({ strike: 'window' });
  if (state.flushRedis > 0 && Object.keys(state.world.keys).length > 0) moves.push({ strike: 'flushRedis' });
  if (state.restart > 0) moves.push({ strike: 'restart' });
  return moves;
}

/** Whether a jump of the clock could change any judgement of the world (a lease, a window, a charge landing). */
function timeMatters(w: World): boolean {
  const { order, row } = w;
  if (order.status === 'PROCESSING' || order.status === 'UNKNOWN') return true;
  if (row && row.outcome === null) return true;
  if (Object.values(w.keys).some((record) => record.state !== 'done')) return true;
  return w.charges.some((charge) => charge.landsAt > w.now);
}

/** The state after a move. `arrivals`: who arrives at a restart. */
export function apply(state: State, move: Move, layers: Layers, arrivals: Role[] = []): State {
  const next: State = {
    ...state,
    world: cloneWorld(state.world),
    actors: [...state.actors],
    broken: [...state.broken],
    paidAtBank: { ...state.paidAtBank },
  };
  if ('step' in move) {
    const index = next.actors.findIndex((actor) => actor.role.name === move.step);
    next.actors[index] = stepActor(next, next.actors[index] as ActorState, layers);
  } else if ('stop' in move) {
    next.actors = next.actors.map((actor) =>
      actor.point !== null ? { ...actor, point: null, ended: { crashedAt: actor.point } } : actor,
    );
  } else {
    switch (move.strike) {
      case 'lease':
        next.world.now += LEASE_MS + 1;
        next.leaseTicks--;
        break;
      case 'window':
        next.world.now += WINDOW_MS + 1;
        next.windowTicks--;
        break;
      case 'flushRedis':
        next.world.keys = {};
        next.flushRedis--;
        break;
      case 'restart': {
        next.restart--;
        next.life++;
        next.actors = next.actors.map((actor) =>
          actor.point !== null ? { ...actor, point: null, ended: { crashedAt: actor.point } } : actor,
        );
        const from = next.actors.length;
        next.actors.push(spawn({ name: 'boot', kind: 'sweep', startup: true }, layers, next.life));
        for (const role of arrivals) next.actors.push(spawn(role, layers, next.life));
        pastStart(next, layers, from);
        break;
      }
    }
  }
  return next;
}

function stepActor(state: State, actor: ActorState, layers: Layers): ActorState {
  const { generator, pending, clock } = revive(actor, layers);
  if (!pending) throw new Error(`model: ${actor.role.name} has nothing to run`);
  const before = state.world;
  if (pending.point === 'pay.bank') state.paidAtBank[actor.role.name] = before.order.status === 'PAID';
  const judged =
    pending.point === 'reconcile.takeOver' || pending.point === 'key.takeOver' ? liveClaim(state, actor) : undefined;
  const result = pending.apply(state.world);
  // A takeover never takes a live claim.
  if (judged && tookOver(state.world, judged)) {
    state.broken.push(`${actor.role.name} took over a live claim at ${pending.point}`);
  }
  const entry: Entry = { result, now: state.world.now, life: state.life };
  clock.entry = entry;
  const next = generator.next(entry);
  const digest = hash(`${actor.digest}|${JSON.stringify(entry)}`);
  const moved: ActorState = {
    ...actor,
    history: [...actor.history, entry],
    digest,
    point: next.done ? null : next.value.point,
  };
  if (next.done) {
    moved.ended = { answer: next.value };
    const answer = next.value as Answer;
    if (answer?.kind === 'completed' && answer.outcome.status === 'DECLINED' && state.paidAtBank[actor.role.name]) {
      state.broken.push(`${actor.role.name} was told DECLINED by a bank call made when the order was PAID`);
    }
    if (actor.role.kind === 'pay') state.broken.push(...claimsLeftBy(state.world, actor.role.name));
  }
  return moved;
}

/**
 * A payment attempt that has just answered holds no claim (world.ts's invariant): its ids are `<its name>.<life>.<n>`
 * (the context's newId).
 */
function claimsLeftBy(world: World, name: string): string[] {
  const its = (holder: string | null) => holder?.startsWith(`${name}.`) ?? false;
  const held = [
    (world.order.status === 'PROCESSING' || world.order.status === 'UNKNOWN') && its(world.order.holder) && 'the order',
    world.row !== null && world.row.outcome === null && its(world.row.owner) && 'the dedup row',
    Object.values(world.keys).some((key) => key.state === 'processing' && its(key.owner)) && 'its request key',
  ].filter((claim): claim is string => typeof claim === 'string');
  return held.length > 0 ? [`${name} answered still holding ${held.join(', ')}`] : [];
}

type Judged = { where: 'order' | { key: string }; fence: number };

/** The claim a takeover is about to act on, if it is live (held within its lease by a living process). */
function liveClaim(state: State, actor: ActorState): Judged | undefined {
  const { world } = state;
  const alive = (holder: string | null) => holder !== null && Number(holder.split('.')[1]) === state.life;
  if (actor.role.kind === 'pay' && actor.point === 'key.takeOver') {
    const key = actor.role.plan.key;
    const record = world.keys[key];
    if (!record || record.state === 'done') return undefined;
    return alive(record.owner) && record.since + LEASE_MS > world.now
      ? { where: { key }, fence: record.fence }
      : undefined;
  }
  const { order, row } = world;
  if (order.status === 'PROCESSING' || order.status === 'UNKNOWN') {
    return alive(order.holder) && (order.claimedAt ?? 0) + LEASE_MS > world.now
      ? { where: 'order', fence: order.fence }
      : undefined;
  }
  if (row && row.outcome === null) {
    return alive(row.owner) && row.claimedAt + LEASE_MS > world.now ? { where: 'order', fence: row.fence } : undefined;
  }
  return undefined;
}

function tookOver(world: World, judged: Judged): boolean {
  if (judged.where === 'order') return world.order.fence !== judged.fence;
  return (world.keys[judged.where.key]?.fence ?? judged.fence) !== judged.fence;
}

// ---- the end of a schedule ---------------------------------------------------------------------------------

/** Runs one actor alone to its end (the final sweeps, the last retry). */
function runAlone(state: State, role: Role, layers: Layers): { state: State; answer: unknown } {
  let current: State = { ...state, actors: [...state.actors, spawn(role, layers, state.life)] };
  const index = current.actors.length - 1;
  while ((current.actors[index] as ActorState).point !== null) current = apply(current, { step: role.name }, layers);
  const ended = (current.actors[index] as ActorState).ended;
  current = { ...current, actors: current.actors.slice(0, index) };
  return { state: current, answer: ended && 'answer' in ended ? ended.answer : undefined };
}

/** Time passes (every late charge lands, every lease runs out) and the sweep runs until nothing changes. */
function settle(state: State, layers: Layers): State {
  let current = state;
  let last = '';
  for (let round = 0; round < 8; round++) {
    current = {
      ...current,
      world: { ...cloneWorld(current.world), now: current.world.now + WINDOW_MS + 2 * LEASE_MS + 1 },
    };
    current = runAlone(current, { name: `settle${round}`, kind: 'sweep' }, layers).state;
    const now = JSON.stringify({ ...current.world, now: 0 });
    if (now === last) break;
    last = now;
  }
  return current;
}

export type End = {
  /** What each actor came to: its answer, or where it died. */
  ends: Record<string, string>;
  /** The world, as the race explorer compares it with the real one. */
  world: WorldSummary;
  violations: string[];
};

/** The parts of the world both the model and the real code can be read for. */
export type WorldSummary = { charges: number; status: string; row: string; keys: string; events: number };

export function summarize(world: World): WorldSummary {
  return {
    charges: world.charges.length,
    status: world.order.status,
    row: world.row ? (world.row.outcome ? `outcome ${world.row.outcome.status}` : 'in doubt') : 'none',
    keys: Object.keys(world.keys)
      .sort()
      .map((key) => `${key}:${world.keys[key]?.state}`)
      .join(' '),
    events: world.events.length,
  };
}

export function answerInWords(answer: unknown): string {
  if (typeof answer !== 'object' || answer === null) return String(answer);
  const a = answer as Answer;
  const by = 'by' in a ? ` (${a.by})` : '';
  const outcome = 'outcome' in a ? ` ${a.outcome.status}` : '';
  return `${a.kind}${by}${outcome}`;
}

/** Whether the configuration promises one charge for this cast. */
export function bounded(layers: Layers, sameKey: boolean, flushed: boolean): boolean {
  return layers.stateMachine || layers.uniqueConstraint || layers.bankKey || (layers.requestKey && sameKey && !flushed);
}

function settledProblems(world: World, when: string): string[] {
  const found: string[] = [];
  const { order, row, charges } = world;
  const ids = charges.map((charge) => charge.id);
  if (ids.length > 0) {
    if (order.status !== 'PAID' || !order.chargeId || !ids.includes(order.chargeId)) {
      found.push(`${when}: the bank charged, but the order is ${order.status}`);
    }
    if (row?.outcome?.status === 'PAID' && row.outcome.chargeId !== order.chargeId) {
      found.push(`${when}: the order and its dedup row name different charges`);
    }
  } else if (order.status !== 'PENDING' && order.status !== 'DECLINED') {
    found.push(`${when}: no charge, and the order is ${order.status}`);
  }
  if (row && row.outcome === null) found.push(`${when}: a dedup row without an outcome is left`);
  if (order.status === 'PAID' && order.chargeId && !world.events.includes(order.chargeId)) {
    found.push(`${when}: no payment.paid event for the order's charge`);
  }
  return found;
}

/** What follows an end (settling, the last retry, settling again): a function of the world alone, cached. */
const AFTERWARDS = new Map<string, { settled: State; retry: { state: State; answer: unknown }; last: State }>();
function afterwards(state: State, layers: Layers) {
  const key = `${JSON.stringify(layers)}|${worldKey(state.world)}|${state.life}`;
  let known = AFTERWARDS.get(key);
  if (!known) {
    const bare: State = { ...state, actors: [], broken: [], paidAtBank: {} };
    const settled = settle(bare, layers);
    const retry = runAlone(settled, { name: 'last', kind: 'pay', plan: { key: 'k0', bank: 'none' } }, layers);
    known = { settled, retry, last: settle(retry.state, layers) };
    if (AFTERWARDS.size > 200_000) AFTERWARDS.clear();
    AFTERWARDS.set(key, known);
  }
  return known;
}

/** Settles an end, checks it, retries once more with the first key, checks again. */
export function finish(state: State, cast: Cast): End {
  const { layers } = cast;
  const sameKey = [...cast.roles, ...(cast.restart ?? [])].every(
    (role) => role.kind !== 'pay' || role.plan.key === 'k0',
  );
  const flushed = state.flushRedis === 0 && cast.flushRedis;
  const ends: Record<string, string> = {};
  const told: unknown[] = [];
  for (const actor of state.actors) {
    if (!actor.ended) continue;
    if ('crashedAt' in actor.ended) ends[actor.role.name] = `died at ${actor.ended.crashedAt}`;
    else {
      ends[actor.role.name] = answerInWords(actor.ended.answer);
      if (actor.role.kind === 'pay') told.push(actor.ended.answer);
    }
  }
  const violations = [...state.broken];
  const check = (world: World, answers: unknown[], when: string) => {
    if (bounded(layers, sameKey, flushed) && world.charges.length > 1) {
      violations.push(`${when}: ${world.charges.length} charges for one order`);
    }
    violations.push(...settledProblems(world, when));
    for (const answer of answers as Answer[]) {
      const outcome = answer && 'outcome' in answer ? answer.outcome : undefined;
      if (outcome?.status === 'PAID' && !world.charges.some((charge) => charge.id === outcome.chargeId)) {
        violations.push(`${when}: told PAID with a charge the bank never made`);
      }
    }
  };
  const { settled, retry, last } = afterwards(state, layers);
  check(settled.world, told, 'after reconciliation');
  const summary = summarize(settled.world);
  ends.last = answerInWords(retry.answer);
  check(last.world, [...told, retry.answer], 'after a last retry');
  const first = state.actors.find((actor) => actor.role.name === 'first')?.ended;
  const firstAnswer = first && 'answer' in first ? (first.answer as Answer) : undefined;
  const declinedFirst =
    firstAnswer !== undefined && 'outcome' in firstAnswer && firstAnswer.outcome.status === 'DECLINED';
  const paid = last.world.order.status === 'PAID' ? last.world.order.chargeId : null;
  const lastOutcome =
    (retry.answer as Answer | undefined) && 'outcome' in (retry.answer as Answer)
      ? (retry.answer as { outcome: Outcome }).outcome
      : undefined;
  if (paid && bounded(layers, sameKey, flushed) && !declinedFirst) {
    if (lastOutcome?.status !== 'PAID' || lastOutcome.chargeId !== paid) {
      violations.push(`the last retry was told ${ends.last}, not the charge`);
    }
  }
  return { ends, world: summary, violations: [...new Set(violations)] };
}

// ---- the exhaustive search ---------------------------------------------------------------------------------

function keyOf(state: State): string {
  const actors = state.actors.map(
    (actor) =>
      `${actor.role.name}@${actor.point}:${actor.ended ? JSON.stringify(actor.ended) : ''}:${actor.digest}:${actor.bornIn}`,
  );
  return hash(
    `${worldKey(state.world)}|${actors.join(';')}|${state.life} ${state.leaseTicks} ${state.windowTicks} ${state.flushRedis} ${state.restart}|${state.broken.join(';')}|${JSON.stringify(state.paidAtBank)}`,
  );
}

/** The world as a string: equal strings, equal worlds. */
function worldKey(w: World): string {
  const o = w.order;
  const r = w.row;
  const keys = Object.keys(w.keys)
    .sort()
    .map((name) => {
      const k = w.keys[name] as World['keys'][string];
      return `${name}=${k.state},${k.owner},${k.fence},${k.firstFence},${k.since},${k.unknownSince},${k.outcome ? JSON.stringify(k.outcome) : ''},${k.existing ?? ''}`;
    })
    .join(';');
  const charges = w.charges.map((c) => `${c.id},${c.landsAt},${c.key},${c.lock}`).join(';');
  const fences = Object.keys(w.fences)
    .sort()
    .map((lock) => `${lock}=${w.fences[lock]}`)
    .join(';');
  const row = r
    ? `${r.owner},${r.fence},${r.firstFence},${r.claimedAt},${r.unknownSince},${r.outcome ? JSON.stringify(r.outcome) : ''}`
    : '-';
  return `${w.now}|${o.status},${o.holder},${o.claimedAt},${o.fence},${o.firstFence},${o.unknownSince},${o.chargeId}|${row}|${keys}|${charges}|${fences}|${w.events.join(',')}|${w.keyClock}`;
}

/** A 2×32-bit hash of a string (cyrb53's mixing, twice): a state's key. */
function hash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  let h3 = 0x9e3779b9;
  for (let i = text.length - 1; i >= 0; i--) h3 = Math.imul(h3 ^ text.charCodeAt(i), 2246822519);
  return `${(h1 >>> 0).toString(36)}.${(h2 >>> 0).toString(36)}.${(h3 >>> 0).toString(36)}.${text.length}`;
}

export type Explored = {
  cast: Cast;
  states: number;
  /** Distinct interleavings from the start to an end (paths in the state graph). */
  interleavings: number;
  ends: number;
  /** Ordered pairs of race points (one actor's step, then another's) some interleaving reaches. */
  pairs: Set<string>;
  /** The first violation found, with the moves that lead to it. */
  counterexample?: { moves: Move[]; end: End };
  /** Per pair of points, and per kind of end, the moves of one interleaving that reaches it. */
  witnesses: Map<string, Move[]>;
};

/** Explores every interleaving of the cast, to `limit` states (a bound the caller states with the count). */
export function explore(cast: Cast, limit = 2_000_000): Explored {
  const paths = new Map<string, number>();
  const result: Explored = { cast, states: 0, interleavings: 0, ends: 0, pairs: new Set(), witnesses: new Map() };
  const root = newState(cast);
  const moves: Move[] = [];
  const noteEnd = (end: End) => {
    const kind = `end ${JSON.stringify(end.world)} ${Object.values(end.ends).join(', ')}`;
    if (!result.witnesses.has(kind)) result.witnesses.set(kind, [...moves]);
    if (end.violations.length > 0 && !result.counterexample) result.counterexample = { moves: [...moves], end };
  };
  const visit = (state: State, lastStep: { actor: string; point: string } | undefined): number => {
    const key = keyOf(state);
    const known = paths.get(key);
    if (known !== undefined) return known;
    if (result.states++ > limit) throw new Error(`model: more than ${limit} states`);
    const open = movesOf(state);
    let count = 0;
    if (open.length === 0) {
      result.ends++;
      noteEnd(finish(state, cast));
      count = 1;
    } else {
      for (const move of open) {
        if ('stop' in move) {
          // An end where every actor still waiting dies: the world does not change, so it is no state to keep.
          result.ends++;
          moves.push(move);
          const dead = state.actors.map((actor) =>
            actor.point !== null ? { ...actor, point: null, ended: { crashedAt: actor.point } } : actor,
          );
          noteEnd(finish({ ...state, actors: dead }, cast));
          moves.pop();
          count += 1;
          continue;
        }
        let step = lastStep;
        if ('step' in move) {
          const actor = state.actors.find((candidate) => candidate.role.name === move.step) as ActorState;
          if (lastStep && lastStep.actor !== move.step) {
            const pair = `${lastStep.point} → ${actor.point}`;
            if (!result.pairs.has(pair)) {
              result.pairs.add(pair);
              result.witnesses.set(`pair ${pair}`, [...moves, move]);
            }
          }
          step = { actor: move.step, point: actor.point as string };
        }
        moves.push(move);
        count += visit(apply(state, move, cast.layers, cast.restart), step);
        moves.pop();
      }
    }
    paths.set(key, count);
    return count;
  };
  result.interleavings = visit(root, undefined);
  return result;
}

/** Where an actor must wait after a step (null: it has ended or died), in the order the real code is checked. */
export type Expectation = { actor: string; point: string | null };

/**
 * Replays moves on the model, for a trace the real code is held to: where each actor waits after each step (and
 * after the starts the model takes at once, first), and the end. Whoever still waits afterwards runs to its end,
 * one at a time, in casting order (as the real scheduler's drain does).
 */
export function replay(cast: Cast, moves: Move[]): { expected: Expectation[]; pairs: Set<string>; end: End } {
  let state = newState(cast);
  const pointOf = (name: string) => state.actors.find((actor) => actor.role.name === name)?.point ?? null;
  const expected: Expectation[] = state.actors.map((actor) => ({ actor: actor.role.name, point: actor.point }));
  const pairs = new Set<string>();
  let last: { actor: string; point: string | null } | undefined;
  const step = (name: string) => {
    const from = pointOf(name);
    if (last && last.actor !== name) pairs.add(`${last.point} → ${from}`);
    last = { actor: name, point: from };
    state = apply(state, { step: name }, cast.layers, cast.restart);
    expected.push({ actor: name, point: pointOf(name) });
  };
  for (const move of moves) {
    if ('step' in move) {
      step(move.step);
      continue;
    }
    const before = state.actors.length;
    state = apply(state, move, cast.layers, cast.restart);
    for (const actor of state.actors.slice(before)) expected.push({ actor: actor.role.name, point: actor.point });
  }
  for (let waiting = pointOfFirst(); waiting; waiting = pointOfFirst()) step(waiting);
  return { expected, pairs, end: finish(state, cast) };

  function pointOfFirst(): string | undefined {
    return state.actors.find((actor) => actor.point !== null)?.role.name;
  }
}

export type { BankFault };
