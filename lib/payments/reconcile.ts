import 'server-only';
// Reconciliation: a payment whose outcome the merchant does not know (the bank timed out, or the process
// died between the claim and the record) is settled by asking the bank "did you charge this order?",
// never by guessing. A charge found: the order is PAID with that charge. No charge: nothing moved, so
// the claim is released and the customer may pay again. Runs at start-up, every few seconds, and on
// demand when a duplicate finds a claim that has gone stale.
import { getDb } from '../db.ts';
import { readDedupRecord, releaseDedupRecord, storeDedupOutcome } from '../defences/dedup.ts';
import { moveOrder } from '../defences/payment-state.ts';
import { env } from '../env.ts';
import { addPaymentPaidEvent } from '../events/outbox.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { bootPrefix, instanceName } from '../instance.ts';
import { startLane } from '../lab/timeline.ts';
import { listCharges } from './bank.ts';
import { outcomeFromCharge, outcomeFromOrder, type PaymentOutcome, parseOutcome } from './outcome.ts';
import type { RaceHook } from './race-points.ts';

export type Reconciled =
  /** The order has a final outcome (found now or already recorded). */
  | { kind: 'settled'; outcome: PaymentOutcome }
  /** The bank has no charge: the claim was released and the order is PENDING again. */
  | { kind: 'released' }
  /** A live attempt still holds the order (its lease has not run out): leave it alone. */
  | { kind: 'running' }
  /** Nothing to do: no such order, or nobody ever claimed it. */
  | { kind: 'idle' };

const SELECT = {
  orderNo: true,
  amountCents: true,
  status: true,
  attemptId: true,
  claimedAt: true,
  chargeId: true,
  paidAt: true,
  declineReason: true,
} as const;

/**
 * Settles one order. `leaseMs`: how long an attempt may hold its claim before it counts as dead.
 * `deadAttempt`: an attempt known to be dead whatever its age (a previous life of this instance).
 */
export async function reconcileOrder(
  orderNo: string,
  options: { leaseMs?: number; deadAttempt?: (attemptId: string) => boolean; now?: () => number; at?: RaceHook } = {},
): Promise<Reconciled> {
  const leaseMs = options.leaseMs ?? env().REQUEST_KEY_LEASE_MS;
  const now = options.now ?? Date.now;
  const db = getDb();
  const [order, record] = await Promise.all([
    db.order.findUnique({ where: { orderNo }, select: SELECT }),
    readDedupRecord(db, 'PAYMENT', orderNo),
  ]);
  if (!order) return { kind: 'idle' };
  await options.at?.('reconcile.read');

  const recorded = outcomeFromOrder(order) ?? parseOutcome(record?.outcome);
  if (recorded) {
    // The order is final; make sure the dedup row says so too (a crash may have come in between).
    if (record && record.outcome === null) await storeDedupOutcome(db, 'PAYMENT', orderNo, recorded);
    return { kind: 'settled', outcome: recorded };
  }

  const staleBefore = now() - leaseMs;
  const deadClaim =
    order.status === 'UNKNOWN' ||
    (order.status === 'PROCESSING' &&
      ((order.claimedAt?.getTime() ?? 0) < staleBefore ||
        (order.attemptId !== null && !!options.deadAttempt?.(order.attemptId))));
  // With layer 3 off the order stays PENDING; a dedup row without an outcome is then the only claim.
  const deadRow = order.status === 'PENDING' && record !== null && record.createdAt.getTime() < staleBefore;
  if (order.status === 'PROCESSING' && !deadClaim) return { kind: 'running' };
  if (!deadClaim && !deadRow) return record ? { kind: 'running' } : { kind: 'idle' };

  const lane = startLane({ orderNo, channel: 'reconciler', instance: instanceName() });
  await options.at?.('reconcile.bank');
  const [charge] = await listCharges(orderNo, now);
  await options.at?.('reconcile.write');
  if (charge) {
    const outcome = outcomeFromCharge(orderNo, charge);
    await db.$transaction(async (tx) => {
      const moved = await moveOrder(tx, orderNo, null, 'reconciledCharged', {
        chargeId: charge.id,
        paidAt: charge.createdAt,
      });
      await storeDedupOutcome(tx, 'PAYMENT', orderNo, outcome);
      if (moved) await addPaymentPaidEvent(tx, outcome);
    });
    lane.mark('reconcile', 'charged', `the bank has charge ${charge.id}: the order is PAID`);
    lane.flush();
    return { kind: 'settled', outcome };
  }
  await db.$transaction(async (tx) => {
    await moveOrder(tx, orderNo, null, 'reconciledNoCharge', { attemptId: null, claimedAt: null });
    if (record) await releaseDedupRecord(tx, 'PAYMENT', orderNo, record.owner);
  });
  lane.mark('reconcile', 'released', 'the bank has no charge: nothing moved, the order may be paid again');
  lane.flush();
  return { kind: 'released' };
}

/** Settles every payment left unknown or whose claim went stale. Returns how many it looked at. */
export async function reconcileStalePayments(options: { atStartup?: boolean; leaseMs?: number } = {}): Promise<number> {
  const leaseMs = options.leaseMs ?? env().REQUEST_KEY_LEASE_MS;
  const staleBefore = new Date(Date.now() - leaseMs);
  const mine = `${instanceName()}.`;
  const current = bootPrefix();
  // At start-up, claims taken by this instance's previous life are dead now, however young they are.
  const deadAttempt = options.atStartup ? (id: string) => id.startsWith(mine) && !id.startsWith(current) : undefined;
  const db = getDb();
  const [orders, rows] = await Promise.all([
    db.order.findMany({
      where: {
        OR: [
          { status: 'UNKNOWN' },
          { status: 'PROCESSING', claimedAt: { lt: staleBefore } },
          ...(options.atStartup ? [{ status: 'PROCESSING' as const, attemptId: { startsWith: mine } }] : []),
        ],
      },
      select: { orderNo: true },
      take: 500,
    }),
    db.idempotentRecord.findMany({
      where: { bizType: 'PAYMENT', outcome: { equals: Prisma.AnyNull }, createdAt: { lt: staleBefore } },
      select: { bizNo: true },
      take: 500,
    }),
  ]);
  const orderNos = new Set([...orders.map((o) => o.orderNo), ...rows.map((r) => r.bizNo)]);
  for (const orderNo of orderNos) {
    try {
      await reconcileOrder(orderNo, { leaseMs, deadAttempt });
    } catch (error) {
      console.error(`[reconcile] ${orderNo}: ${error instanceof Error ? error.message : error}`);
    }
  }
  return orderNos.size;
}
