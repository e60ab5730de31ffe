// A worker thread of the exhaustive mode: explores the casts it is sent, one at a time (exhaustive.ts).
import { parentPort } from 'node:worker_threads';
import { type Cast, explore } from './checker.ts';

parentPort?.on('message', (message: { id: number; cast: Cast; limit: number }) => {
  const started = performance.now();
  try {
    const explored = explore(message.cast, message.limit);
    parentPort?.postMessage({
      id: message.id,
      states: explored.states,
      interleavings: explored.interleavings,
      ends: explored.ends,
      pairs: [...explored.pairs],
      counterexample: explored.counterexample,
      witnesses: [...explored.witnesses.entries()],
      ms: performance.now() - started,
    });
  } catch (error) {
    parentPort?.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
});
