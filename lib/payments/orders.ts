import 'server-only';
import { z } from 'zod';
import { getDb } from '../db.ts';
import { claimRequestKey, completeRequestKey, releaseRequestKey, takeOverRequestKey } from '../defences/request-key.ts';
import { env } from '../env.ts';
import type { PaymentStatus } from '../generated/prisma/client.ts';
import { newAttemptId } from '../instance.ts';
import type { LabSettingsPatch } from '../lab/settings.ts';
import { type Charge, listCharges } from './bank.ts';
import { newOrderNo } from './order-no.ts';
import { outcomeFromOrder, type PaymentOutcome } from './outcome.ts';

export const DEFAULT_AMOUNT_CENTS = 4_200;

export type OrderSummary = { orderNo: string; amountCents: number; status: PaymentStatus };

/** An order as POST /api/orders answers it: its fields always in this order, so a replay is the same bytes. */
export const OrderSummarySchema = z.object({
  orderNo: z.string(),
  amountCents: z.number().int(),
  status: z.enum(['PENDING', 'PROCESSING', 'PAID', 'DECLINED', 'UNKNOWN']),
});
export type OrderView = OrderSummary & { charges: Charge[] };

export async function createOrder(input: { amountCents?: number; lab?: LabSettingsPatch }): Promise<OrderSummary> {
  return getDb().order.create({
    data: {
      orderNo: newOrderNo(),
      amountCents: input.amountCents ?? DEFAULT_AMOUNT_CENTS,
      ...(input.lab ? { lab: input.lab } : {}),
    },
    select: { orderNo: true, amountCents: true, status: true },
  });
}

/** The order with what the card network recorded for it, or null when there is no such order. */
export async function findOrderView(orderNo: string): Promise<OrderView | null> {
  const [order, charges] = await Promise.all([
    getDb().order.findUnique({ where: { orderNo }, select: { orderNo: true, amountCents: true, status: true } }),
    listCharges(orderNo),
  ]);
  return order ? { ...order, charges } : null;
}

export async function orderExists(orderNo: string): Promise<boolean> {
  return (await getDb().order.count({ where: { orderNo } })) === 1;
}

/** The order's final outcome, if it has one (what a customer told "already submitted" wants to know). */
export async function findOrderOutcome(orderNo: string): Promise<PaymentOutcome | undefined> {
  const order = await getDb().order.findUnique({
    where: { orderNo },
    select: { orderNo: true, amountCents: true, status: true, chargeId: true, paidAt: true, declineReason: true },
  });
  return order ? outcomeFromOrder(order) : undefined;
}

/** The endpoint an order's Idempotency-Key is bound to: the same key on another endpoint is refused. */
export const ORDERS_ENDPOINT = 'POST /api/orders';

export type CreatedOnce =
  | { kind: 'created' | 'replayed'; order: OrderSummary }
  | { kind: 'in_progress' }
  | { kind: 'mismatch'; usedOn?: string };

/**
 * Creates an order at most once per Idempotency-Key (layer 2's claim, bound to this endpoint): a retry gets
 * the first order back, a concurrent one "in progress", the key with another body a mismatch. A creator that
 * died between its insert and storing the order under the key leaves one PENDING order nobody references
 * (no money moves on creation): after the lease, the retry creates another.
 */
export async function createOrderOnce(
  input: { amountCents?: number; lab?: LabSettingsPatch },
  key: { name: string; fingerprint: string },
): Promise<CreatedOnce> {
  const owner = newAttemptId();
  const context = {
    now: Date.now(),
    leaseMs: env().REQUEST_KEY_LEASE_MS,
    ttlSeconds: env().REQUEST_KEY_RESULT_TTL_SECONDS,
  };
  const claim = { owner, fingerprint: key.fingerprint, endpoint: ORDERS_ENDPOINT };
  const decision = await claimRequestKey(key.name, claim, context);
  switch (decision.kind) {
    case 'replay': {
      const order = OrderSummarySchema.safeParse(decision.outcome);
      return order.success ? { kind: 'replayed', order: order.data } : { kind: 'in_progress' };
    }
    case 'in_progress':
      return { kind: 'in_progress' };
    case 'mismatch':
      return { kind: 'mismatch', usedOn: decision.usedOn };
    case 'abandoned':
      if ((await takeOverRequestKey(key.name, decision.claim, claim, context)) === undefined) {
        return { kind: 'in_progress' };
      }
      break;
    case 'claimed':
      break;
  }
  let order: OrderSummary;
  try {
    order = OrderSummarySchema.parse(await createOrder(input));
  } catch (error) {
    await releaseRequestKey(key.name, owner).catch(() => false);
    throw error;
  }
  const done = { fingerprint: key.fingerprint, endpoint: ORDERS_ENDPOINT, outcome: order, existing: false };
  await completeRequestKey(key.name, owner, done, context.ttlSeconds);
  return { kind: 'created', order };
}
