import 'server-only';
// Runs the reconciler in the app process: once at start-up (claims this instance's previous life left
// behind are settled at once) and then every few seconds (stale claims of any instance, unknown outcomes);
// and, hourly, the dedup table's cleanup and the retention job (lib/payments/retention.ts).
import { env } from '../env.ts';
import { reconcileStalePayments } from './reconcile.ts';
import { runHousekeeping } from './retention.ts';

const EVERY_MS = 5_000;
let started = false;

export function startReconciler(): void {
  if (started) return;
  started = true;
  let failing = false;
  // The start-up sweep settles what this instance's previous life left at once; until it has run once (the
  // database or Redis may not answer yet, or time out while a busy machine starts), every round is one.
  let startedUp = false;
  const sweep = async () => {
    const atStartup = !startedUp;
    try {
      const looked = await reconcileStalePayments({ atStartup });
      startedUp = true;
      if (atStartup && looked > 0) console.log(`[reconcile] settled ${looked} payment(s) left over at start-up`);
      if (failing) console.log('[reconcile] running again');
      failing = false;
    } catch (error) {
      // A database outage: say it once, keep trying.
      if (!failing) console.error(`[reconcile] paused: ${error instanceof Error ? error.message : error}`);
      failing = true;
    }
  };
  void sweep();
  setInterval(() => void sweep(), Math.min(EVERY_MS, env().REQUEST_KEY_LEASE_MS)).unref();
  // Layer 4's table needs cleanup (the article says so), and nothing grows without bound (retention).
  const housekeeping = () =>
    runHousekeeping(new Date(), {
      retentionDays: env().RETENTION_DAYS,
      dedupRetentionDays: env().DEDUP_RETENTION_DAYS,
    });
  void housekeeping();
  setInterval(() => void housekeeping(), 3_600_000).unref();
}
