import 'server-only';
// Runs the reconciler in the app process: once at start-up (claims this instance's previous life left
// behind are settled at once) and then every few seconds (stale claims of any instance, unknown outcomes,
// charges on the bank's settlement report that no order recorded; the same for refunds' claims); and, hourly,
// the retention job
// (lib/payments/retention.ts), which is also the dedup table's cleanup.
import { BANK_SETTLEMENT_WINDOW_MS } from '../defences/layers.ts';
import { env } from '../env.ts';
import { reconcileStaleRefunds } from '../refunds/reconcile.ts';
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
  // The settlement report is read from where the last sweep's left off (less a minute, for charges committed
  // while it read); at start-up from as far back as retention keeps anything. It lists a charge once it has
  // settled, the bank's settlement window after it landed, as a processor's report comes after the day: until
  // then the charge's payers and the recovery of their claims are at work. (An order whose claim was given
  // back after its charge, the lab's "any error" rule, is found then: a retry within the window charges again.)
  let lastReportAt: number | undefined;
  const sweep = async () => {
    const atStartup = !startedUp;
    const startedAt = Date.now();
    const settledBy = startedAt - BANK_SETTLEMENT_WINDOW_MS;
    const lookBackDays = env().RETENTION_DAYS || 30;
    const landedSince =
      lastReportAt === undefined
        ? startedAt - lookBackDays * 86_400_000
        : lastReportAt - BANK_SETTLEMENT_WINDOW_MS - 60_000;
    try {
      const looked = await reconcileStalePayments({ atStartup, landedSince, settledBy });
      // The refunds' dead claims, the same way (lib/refunds/reconcile.ts).
      const refunds = await reconcileStaleRefunds({ atStartup, landedSince, settledBy });
      if (atStartup && refunds > 0) console.log(`[reconcile] settled ${refunds} refund(s) left over at start-up`);
      startedUp = true;
      lastReportAt = startedAt;
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
  // Layer 4's table needs cleanup (the article says so), and nothing grows without bound: retention prunes a
  // settled order with every row that hangs on it, its dedup rows among them (lib/payments/retention.ts).
  const housekeeping = () => runHousekeeping(new Date(), { retentionDays: env().RETENTION_DAYS });
  void housekeeping();
  setInterval(() => void housekeeping(), 3_600_000).unref();
}
