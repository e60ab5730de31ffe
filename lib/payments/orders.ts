import 'server-only';
import { getDb } from '../db.ts';
import type { PaymentStatus } from '../generated/prisma/client.ts';
import type { LabSettingsPatch } from '../lab/settings.ts';
import { type Charge, listCharges } from './bank.ts';
import { newOrderNo } from './order-no.ts';
import { outcomeFromOrder, type PaymentOutcome } from './outcome.ts';

export const DEFAULT_AMOUNT_CENTS = 4_200;

export type OrderSummary = { orderNo: string; amountCents: number; status: PaymentStatus };
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
