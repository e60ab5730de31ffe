// The race explorer's scheduler: actors (payment attempts, reconcilers, the clock) run one at a time, and
// between two named points (lib/payments/race-points.ts) an actor runs alone. At each point the actor
// stops, and the scheduler picks who runs next from a list of choices (fast-check generates and shrinks
// it), so one list of choices is one interleaving, replayed exactly. No sleeps, no luck.

/** How an actor ended. */
export type ActorEnd<T> = { kind: 'returned'; value: T } | { kind: 'threw'; error: unknown };

type Waiting = { point: string; resume: () => void };

export class RaceScheduler {
  /** Actors stopped at a point, waiting for their turn, by name. */
  private readonly waiting = new Map<string, Waiting>();
  private readonly names: string[] = [];
  /** Resolved when the running actor reaches its next point or ends. */
  private yielded: (() => void) | undefined;
  private step = 0;
  /** Every step taken: `actor@point`, the interleaving in words. */
  readonly trace: string[] = [];

  /**
   * `choices`: actor indices (in order of spawning), one per step, used in turn and then from the start
   * again; a chosen actor that is not waiting (it ended) gives its turn to the next waiting one.
   */
  constructor(private readonly choices: readonly number[]) {}

  /** Starts an actor; it waits at `start` for its first turn. `at` is its hook for the named points. */
  spawn<T>(name: string, body: (at: (point: string) => Promise<void>) => Promise<T>): Promise<ActorEnd<T>> {
    this.names.push(name);
    const at = (point: string) =>
      new Promise<void>((resume) => {
        this.waiting.set(name, { point, resume });
        this.yielded?.();
      });
    return (async (): Promise<ActorEnd<T>> => {
      try {
        await at('start');
        return { kind: 'returned', value: await body(at) };
      } catch (error) {
        return { kind: 'threw', error };
      } finally {
        queueMicrotask(() => this.yielded?.());
      }
    })();
  }

  /** Runs every actor to its end, one step at a time. Throws when an actor takes longer than `stepMs`. */
  async run(stepMs = 10_000): Promise<void> {
    while (this.waiting.size > 0) {
      const name = this.pick();
      const turn = this.waiting.get(name);
      if (!turn) throw new Error(`scheduler: ${name} is not waiting`);
      this.waiting.delete(name);
      this.trace.push(`${name}@${turn.point}`);
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve, reject) => {
        this.yielded = resolve;
        timer = setTimeout(
          () => reject(new Error(`scheduler: ${name} did not reach a point within ${stepMs} ms (after ${turn.point})`)),
          stepMs,
        );
        turn.resume();
      }).finally(() => clearTimeout(timer));
      this.yielded = undefined;
    }
  }

  private pick(): string {
    const choice = this.choices.length === 0 ? 0 : (this.choices[this.step % this.choices.length] ?? 0);
    this.step++;
    for (let offset = 0; offset < this.names.length; offset++) {
      const name = this.names[(choice + offset) % this.names.length];
      if (name !== undefined && this.waiting.has(name)) return name;
    }
    throw new Error('scheduler: nobody is waiting');
  }
}
