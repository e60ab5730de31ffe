// The exhaustive mode: every cast of every configuration the matrix declares safe (bound.ts), explored by the
// model checker on worker threads, one per core. Returns, per configuration, the states and interleavings
// explored, the ordered pairs of race points reached, the first violation if any, and the traces (moves) that
// the real code is then held to (conformance.ts).
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { type Configuration, castInWords, castsOf, safeConfigurations } from './bound.ts';
import type { Cast, End, Move } from './checker.ts';

export type CastResult = {
  cast: Cast;
  states: number;
  interleavings: number;
  ends: number;
  pairs: string[];
  counterexample?: { moves: Move[]; end: End };
  witnesses: Array<[string, Move[]]>;
  ms: number;
};

export type ConfigurationResult = {
  configuration: Configuration;
  casts: CastResult[];
  states: number;
  interleavings: number;
  pairs: Set<string>;
  violations: Array<{ cast: string; moves: Move[]; end: End }>;
};

export async function runExhaustive(
  options: { configurations?: Configuration[]; workers?: number; limit?: number; log?: (line: string) => void } = {},
): Promise<ConfigurationResult[]> {
  const configurations = options.configurations ?? safeConfigurations();
  const tasks = configurations.flatMap((configuration, index) =>
    castsOf(configuration.layers).map((cast) => ({ index, cast })),
  );
  // The largest first, so that two workers end together.
  tasks.sort((a, b) => weight(b.cast) - weight(a.cast));
  const results: ConfigurationResult[] = configurations.map((configuration) => ({
    configuration,
    casts: [],
    states: 0,
    interleavings: 0,
    pairs: new Set(),
    violations: [],
  }));
  const count = Math.max(1, Math.min(options.workers ?? availableParallelism(), tasks.length));
  const workers = Array.from({ length: count }, () => new Worker(new URL('./worker.mjs', import.meta.url)));
  let next = 0;
  try {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            const send = () => {
              const task = tasks[next];
              if (!task) return resolve();
              const id = next++;
              worker.postMessage({ id, cast: task.cast, limit: options.limit ?? 5_000_000 });
            };
            worker.on('message', (message: CastResult & { id: number; error?: string }) => {
              const task = tasks[message.id];
              if (!task) return reject(new Error(`model: no task ${message.id}`));
              if (message.error) return reject(new Error(`model: ${castInWords(task.cast)}: ${message.error}`));
              const result = results[task.index] as ConfigurationResult;
              result.casts.push({ ...message, cast: task.cast });
              result.states += message.states;
              result.interleavings += message.interleavings;
              for (const pair of message.pairs) result.pairs.add(pair);
              if (message.counterexample) {
                result.violations.push({ cast: castInWords(task.cast), ...message.counterexample });
              }
              options.log?.(
                `[model] ${result.configuration.name}: ${castInWords(task.cast)}: ${message.states} states (${Math.round(message.ms)} ms)`,
              );
              send();
            });
            worker.on('error', reject);
            send();
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return results;
}

/** A rough size, to start the largest casts first. */
function weight(cast: Cast): number {
  return (
    (cast.flushRedis ? 5 : 1) * (cast.roles.length + (cast.restart?.length ?? 0)) * (cast.layers.requestKey ? 2 : 1)
  );
}
