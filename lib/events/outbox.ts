import 'server-only';
// The transactional outbox: "the payment succeeded" is written in the same transaction as the order's
// move to PAID, so the event exists if and only if the payment was recorded. The relay publishes it later.
import type { Prisma } from '../generated/prisma/client.ts';
import type { PaymentOutcome } from '../payments/outcome.ts';

export const PAYMENT_PAID = 'payment.paid';

export async function addPaymentPaidEvent(tx: Prisma.TransactionClient, outcome: PaymentOutcome & { status: 'PAID' }) {
  await tx.outboxEvent.create({
    data: { topic: PAYMENT_PAID, key: outcome.orderNo, payload: outcome },
    select: { id: true },
  });
}
