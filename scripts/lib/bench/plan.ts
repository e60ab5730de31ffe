// The benchmark's fixed parts (scripts/bench.ts runs it): its ports, its load (connections, seconds, warm-up).

export const PORTS = { postgres: 25435, redis: 26382, app: 3150 }; // below the ephemeral range (scripts/test.ts)
export const CONNECTIONS = 50;
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const WARMUP_SECONDS = 3;
/**
 * The ratio to the ideal (section 1, on the lab-on and the lab-off instance): longer, and in more turns, than the
 * other measurements. With three turns of 3.3 s, one run's ratio moved by ±0.05 from the next's on this machine;
 * and the machine's own speed moves in phases of tens of seconds (the same route at 213 and at 481 req/s within one
 * process, 2026-12-05), so the ratio is read turn by turn, each route's turn against its neighbour's.
 */
export const RATIO_SECONDS = 6.3 * SECONDS;
/**
 * Odd, so that the median turn is one turn's (of each route, and of their ratios). Twenty-one: two runs of the same
 * code in eleven turns gave 0.94 and 0.89 (2026-12-05); the median of more turns moves less from run to run.
 */
export const RATIO_TURNS = 21;
export const BASE = `http://127.0.0.1:${PORTS.app}`;
/** One section alone: 'chaos' (see the header). */
export const ONLY = process.env.BENCH_ONLY;
export const log = (line: string) => console.log(`[bench] ${line}`);

export type Load = {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
  /** Measured in turns (measureInTurns): each turn's req/s, in the order they ran. */
  turns?: number[];
};
