// Runs one background job once, as the app's loops run it, against DATABASE_URL and REDIS_URL, and prints how
// long it took as one line of JSON: `node --conditions=react-server --import tsx scripts/lib/scale/job.ts sweep`.
// A process of its own, so that the database's read counters of its connections are its own (they are flushed
// when it ends), and so that it reaches the database it is given, not the test's (scripts/lib/scale/reads.ts).
//   sweep      the reconciler's round, as every 5 s (not the start-up one): dead claims and unknown outcomes of
//              payments and refunds, and the bank's settlement report of the last round's window
//   retention  the hourly job: every batch due (RETENTION_DAYS, 30 by default)
//   relay      the outbox relay: every event not yet published, 100 at a time
import { BANK_SETTLEMENT_WINDOW_MS } from '../../../lib/defences/layers.ts';
import { relayOutbox } from '../../../lib/events/relay.ts';
import { registerLab } from '../../../lib/lab/register.ts';
import { reconcileStalePayments } from '../../../lib/payments/reconcile.ts';
import { runHousekeeping } from '../../../lib/payments/retention.ts';
import { reconcileStaleRefunds } from '../../../lib/refunds/reconcile.ts';
import { JOBS, type Job } from './reads.ts';

async function runJob(job: Job): Promise<number> {
  const now = Date.now();
  if (job === 'sweep') {
    // A round of the loop: the report read from where the previous round's left off (reconciler-loop.ts).
    const window = {
      landedSince: now - 5_000 - BANK_SETTLEMENT_WINDOW_MS - 60_000,
      settledBy: now - BANK_SETTLEMENT_WINDOW_MS,
    };
    return (await reconcileStalePayments(window)) + (await reconcileStaleRefunds(window));
  }
  if (job === 'retention') {
    const pruned = await runHousekeeping(new Date(now), { retentionDays: Number(process.env.RETENTION_DAYS ?? 30) });
    return pruned.orders + pruned.outbox + pruned.fences;
  }
  let published = 0;
  for (let batch = await relayOutbox(); batch > 0; batch = await relayOutbox()) published += batch;
  return published;
}

async function main(): Promise<void> {
  const job = process.argv[2] as Job;
  if (!JOBS.includes(job)) throw new Error(`usage: job.ts ${JOBS.join('|')}`);
  registerLab();
  const started = performance.now();
  const found = await runJob(job);
  const ms = Math.round((performance.now() - started) * 10) / 10;
  console.log(JSON.stringify({ job, ms, found }));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`[job] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
