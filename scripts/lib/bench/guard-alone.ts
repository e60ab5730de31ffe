// Section 1's last measure: the guard alone, without HTTP or Next.js, in a process of its own
// (guard-alone-run.ts), with the lab off and with it on. Section 1's throughput counts everything a request costs
// on a machine the app shares with PostgreSQL, Redis and the load, and its turns move by ±0.15; this is the CPU the
// app itself spends a payment in the guard (its code, its clients' work, its collector), counted exactly, so that
// what the pipeline costs above the hand-written ideal is a number of microseconds, not a share of a noisy ratio.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ROOT } from '../paths.ts';
import { log } from './plan.ts';

/** A batch's CPU a payment, in µs: the guard's process, and the servers'. */
export type Cost = { app: number; postgres: number; redis: number };
/** One pair of batches: the ideal's and the pipeline's, one after the other. */
export type Pair = { ideal: Cost; guarded: Cost };
export type GuardAlone = { batch: number; concurrency: number; labOff: Pair[]; labOn: Pair[] };

/**
 * Both runs, on a Redis database of their own (emptied before each and after: the payments' keys, the orders' facts
 * and the lab's timeline, some 40 MB, would otherwise stay in the server the other sections share).
 */
export async function measureGuardAlone(urls: { databaseUrl: string; redisUrl: string }): Promise<GuardAlone> {
  const redisUrl = new URL(urls.redisUrl);
  redisUrl.pathname = `/${REDIS_DB}`;
  const own = { databaseUrl: urls.databaseUrl, redisUrl: redisUrl.toString() };
  const redis = new Redis(own.redisUrl);
  try {
    await redis.flushdb();
    const labOff = await runAlone(own, 'false');
    await redis.flushdb();
    const labOn = await runAlone(own, 'true');
    return { batch: labOff.batch, concurrency: labOff.concurrency, labOff: labOff.pairs, labOn: labOn.pairs };
  } finally {
    await redis.flushdb();
    redis.disconnect();
  }
}
/** Its Redis database (section 7's are 3 and 4). */
const REDIS_DB = 6;

type Run = { batch: number; concurrency: number; pairs: Pair[] };

function runAlone(urls: { databaseUrl: string; redisUrl: string }, lab: 'true' | 'false'): Promise<Run> {
  log(`the guard alone, in a process of its own, the lab ${lab === 'true' ? 'on' : 'off'}...`);
  const child = spawn(
    process.execPath,
    ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'scripts/lib/bench/guard-alone-run.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        DATABASE_URL: urls.databaseUrl,
        REDIS_URL: urls.redisUrl,
        LAB_ENABLED: lab,
        BACKGROUND_JOBS: 'false',
        INSTANCE_NAME: `bench-guard-alone-${lab === 'true' ? 'on' : 'off'}`,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) return reject(new Error(`the guard alone: exit ${code}: ${out}`));
      resolve(JSON.parse(line) as Run);
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/**
 * Each side's median a payment (µs) of the app's CPU, PostgreSQL's and Redis's; and the pairs' ratios (the
 * pipeline's over the ideal's) of the app's CPU and of all three's: their median, lowest and highest.
 */
export function guardAloneSummary(pairs: Pair[]) {
  const side = (of: (pair: Pair) => Cost) => ({
    app: median(pairs.map((pair) => of(pair).app)),
    postgres: median(pairs.map((pair) => of(pair).postgres)),
    redis: median(pairs.map((pair) => of(pair).redis)),
  });
  const all = (cost: Cost) => cost.app + cost.postgres + cost.redis;
  const spread = (ratios: number[]) => ({
    median: median(ratios),
    low: Math.min(...ratios),
    high: Math.max(...ratios),
  });
  return {
    ideal: side((pair) => pair.ideal),
    guarded: side((pair) => pair.guarded),
    app: spread(pairs.map((pair) => pair.guarded.app / pair.ideal.app)),
    all: spread(pairs.map((pair) => all(pair.guarded) / all(pair.ideal))),
  };
}
