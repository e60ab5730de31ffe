// A payment's final outcome: what the first request answered, and what every duplicate must answer too
// (the article's second detail). Stored by layer 2 (Redis), layer 4 (the dedup row) and derivable from
// the order (layer 3); read back through this schema, never trusted blindly.
import { z } from 'zod';

export const PaymentOutcomeSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('PAID'),
    orderNo: z.string(),
    amountCents: z.number().int(),
    chargeId: z.string(),
    paidAt: z.string(),
  }),
  z.object({
    status: z.literal('DECLINED'),
    orderNo: z.string(),
    amountCents: z.number().int(),
    reason: z.string(),
  }),
]);
export type PaymentOutcome = z.infer<typeof PaymentOutcomeSchema>;

export function parseOutcome(value: unknown): PaymentOutcome | undefined {
  const parsed = PaymentOutcomeSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

type OrderFacts = {
  orderNo: string;
  amountCents: number;
  status: string;
  chargeId: string | null;
  paidAt: Date | null;
  declineReason: string | null;
};

/** The outcome an order's row records, if it is final. */
export function outcomeFromOrder(order: OrderFacts): PaymentOutcome | undefined {
  if (order.status === 'PAID' && order.chargeId && order.paidAt) {
    const { orderNo, amountCents, chargeId } = order;
    return { status: 'PAID', orderNo, amountCents, chargeId, paidAt: order.paidAt.toISOString() };
  }
  if (order.status === 'DECLINED') {
    const { orderNo, amountCents } = order;
    return { status: 'DECLINED', orderNo, amountCents, reason: order.declineReason ?? 'declined' };
  }
  return undefined;
}

/** The outcome a charge on the card network's statement means: the order is paid, by that charge. */
export function outcomeFromCharge(
  orderNo: string,
  charge: { id: string; amountCents: number; createdAt: Date },
): PaymentOutcome & { status: 'PAID' } {
  return {
    status: 'PAID',
    orderNo,
    amountCents: charge.amountCents,
    chargeId: charge.id,
    paidAt: charge.createdAt.toISOString(),
  };
}
