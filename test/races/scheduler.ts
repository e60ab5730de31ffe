// The race explorer's scheduler: actors (payment attempts, reconcilers, the sweep, the clock) run one at a
// time, and between two named points (lib/defences/race-points.ts) an actor runs alone. At each point the
// actor stops, and the scheduler decides who runs next: from a list of choices (random schedules, which
// fast-check generates and shrinks), from a script (the regression schedules), or from a model's trace
// (test/races/conformance.ts). One list of decisions is one interleaving, replayed exactly. No sleeps.
//
// A crash is what it is in a real process: the actor is never resumed. Nothing after its point runs, no
// `finally`, no release; its claims stay where they are, for the recovery path to find. A store failure is the
// other way an operation ends: the actor runs on from its point, and the point throws what the store's client
// would (a connection lost); the code's own handling of errors runs.

/** How an actor ended. */
export type ActorEnd<T> =
  | { kind: 'returned'; value: T }
  | { kind: 'threw'; error: unknown }
  /** Killed at `point` (a crash fault, or a restart of its process): it never ran another line. */
  | { kind: 'crashed'; point: string };

/** What an actor's store throws where the schedule makes it fail (a connection lost, a database down). */
export class StoreFailure extends Error {
  constructor(readonly point: string) {
    super(`its store failed after ${point} (injected)`);
    this.name = 'StoreFailure';
  }
}

type Actor = {
  name: string;
  /**
   * Where it waits for its turn (undefined while it runs, or once it has ended). `fails`: its store fails there, so
   * it is run on by `fail` (the point throws) instead of `resume`.
   */
  waiting?: { point: string; fails: boolean; resume: () => void; fail: () => void };
  ended: boolean;
  /** Dies on arriving at this point (its n-th arrival there, 1 by default). */
  crashAt?: { point: string; nth: number };
  /** Its store fails at this point (its n-th arrival there): the point throws when it runs on from it. */
  failAt?: { point: string; nth: number };
  arrivals: Map<string, number>;
  finish: (end: ActorEnd<unknown>) => void;
};

export type StepHooks = {
  /** Before `actor` runs on from `point` (the world can be inspected: nobody else runs meanwhile). */
  before?: (actor: string, point: string) => Promise<void>;
  /** After it reached its next point (`next`), or ended. */
  after?: (actor: string, point: string, next: string | undefined) => Promise<void>;
};

export class RaceScheduler {
  private readonly actors: Actor[] = [];
  /** Resolved when the running actor reaches its next point, ends or dies. */
  private yielded: (() => void) | undefined;
  /** Every step taken, `actor@point`: the interleaving in words. */
  readonly trace: string[] = [];

  constructor(
    private readonly hooks: StepHooks = {},
    private readonly stepMs = 20_000,
  ) {}

  /**
   * Starts an actor; it waits at `start` for its first turn. `at` is its hook for the named points.
   * `crashAt`: the actor dies when it arrives there (its `nth` arrival). `failAt`: the operation after that point
   * fails (the hook throws a StoreFailure when the actor runs on from it, as the store's client would throw).
   */
  spawn<T>(
    name: string,
    body: (at: (point: string) => Promise<void>) => Promise<T>,
    crashAt?: { point: string; nth?: number },
    failAt?: { point: string; nth?: number },
  ): Promise<ActorEnd<T>> {
    let finish: (end: ActorEnd<unknown>) => void = () => {};
    const ended = new Promise<ActorEnd<T>>((resolve) => {
      finish = resolve as (end: ActorEnd<unknown>) => void;
    });
    const actor: Actor = {
      name,
      ended: false,
      crashAt: crashAt && { point: crashAt.point, nth: crashAt.nth ?? 1 },
      failAt: failAt && { point: failAt.point, nth: failAt.nth ?? 1 },
      arrivals: new Map(),
      finish: (end) => {
        if (actor.ended) return;
        actor.ended = true;
        actor.waiting = undefined;
        finish(end);
        queueMicrotask(() => this.yielded?.());
      },
    };
    this.actors.push(actor);
    const at = (point: string) =>
      new Promise<void>((resume, reject) => {
        const arrivals = (actor.arrivals.get(point) ?? 0) + 1;
        actor.arrivals.set(point, arrivals);
        const here = (planned?: { point: string; nth: number }) => planned?.point === point && planned.nth === arrivals;
        if (here(actor.crashAt)) {
          actor.finish({ kind: 'crashed', point }); // and `resume` is never called
          return;
        }
        const fail = () => reject(new StoreFailure(point));
        actor.waiting = { point, fails: here(actor.failAt), resume, fail };
        this.yielded?.();
      });
    void (async () => {
      try {
        await at('start');
        const value = await body(at);
        actor.finish({ kind: 'returned', value });
      } catch (error) {
        actor.finish({ kind: 'threw', error });
      }
    })();
    return ended;
  }

  /** The actors' names, in the order they were spawned. */
  get names(): string[] {
    return this.actors.map((actor) => actor.name);
  }

  /** Where the actor waits, or undefined (running, ended or dead). */
  waitingAt(name: string): string | undefined {
    return this.actor(name).waiting?.point;
  }

  /** The actors waiting for a turn, in spawning order. */
  waitingActors(): string[] {
    return this.actors.filter((actor) => actor.waiting).map((actor) => actor.name);
  }

  hasEnded(name: string): boolean {
    return this.actor(name).ended;
  }

  /** The actor dies where it waits: it is never resumed. */
  crash(name: string): void {
    const actor = this.actor(name);
    if (!actor.waiting) throw new Error(`scheduler: ${name} is not waiting, it cannot be crashed`);
    const { point } = actor.waiting;
    this.trace.push(`${name}✝${point}`);
    actor.finish({ kind: 'crashed', point });
  }

  /** The actor's store fails where it waits: when it next runs, the operation after its point throws. */
  fail(name: string): void {
    const { waiting } = this.actor(name);
    if (!waiting) throw new Error(`scheduler: ${name} is not waiting, its store cannot fail`);
    waiting.fails = true;
  }

  /** Runs `name` from the point it waits at to its next point (or its end). */
  async step(name: string): Promise<void> {
    const actor = this.actor(name);
    const turn = actor.waiting;
    if (!turn) throw new Error(`scheduler: ${name} is not waiting`);
    await this.hooks.before?.(name, turn.point);
    actor.waiting = undefined;
    this.trace.push(turn.fails ? `${name}✗${turn.point}` : `${name}@${turn.point}`);
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve, reject) => {
      this.yielded = resolve;
      timer = setTimeout(
        () =>
          reject(new Error(`scheduler: ${name} did not reach a point within ${this.stepMs} ms (after ${turn.point})`)),
        this.stepMs,
      );
      if (turn.fails) turn.fail();
      else turn.resume();
    }).finally(() => clearTimeout(timer));
    this.yielded = undefined;
    // Let an actor that just finished settle its end before anyone looks.
    await new Promise((resolve) => setImmediate(resolve));
    await this.hooks.after?.(name, turn.point, this.waitingAt(name));
  }

  /** Runs `name` until it waits at `point` (at once if it waits there already), or to its end. Throws if it ends first. */
  async runUntil(name: string, point?: string): Promise<void> {
    for (;;) {
      const at = this.waitingAt(name);
      if (at === undefined) {
        if (point === undefined && this.hasEnded(name)) return;
        throw new Error(`scheduler: ${name} ended before reaching ${point} (trace: ${this.trace.join(' ')})`);
      }
      if (at === point) return;
      await this.step(name);
    }
  }

  /**
   * Runs every actor to its end. At each step the next choice (an actor index, in spawning order, used in turn
   * and then from the start again) picks who runs; a chosen actor that is not waiting gives its turn to the next
   * waiting one.
   */
  async runChoices(choices: readonly number[]): Promise<void> {
    let stepNo = 0;
    for (let waiting = this.waitingActors(); waiting.length > 0; waiting = this.waitingActors()) {
      const choice = choices.length === 0 ? 0 : (choices[stepNo % choices.length] ?? 0);
      stepNo++;
      const names = this.names;
      let picked: string | undefined;
      for (let offset = 0; offset < names.length && !picked; offset++) {
        const name = names[(choice + offset) % names.length];
        if (name !== undefined && this.waitingAt(name) !== undefined) picked = name;
      }
      if (!picked) throw new Error('scheduler: nobody is waiting');
      await this.step(picked);
    }
  }

  /** Runs whoever still waits to its end, one at a time, in spawning order. */
  async drain(): Promise<void> {
    for (let waiting = this.waitingActors(); waiting.length > 0; waiting = this.waitingActors()) {
      await this.runUntil(waiting[0] as string);
    }
  }

  private actor(name: string): Actor {
    const actor = this.actors.find((candidate) => candidate.name === name);
    if (!actor) throw new Error(`scheduler: no actor ${name}`);
    return actor;
  }
}
