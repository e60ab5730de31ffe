import 'server-only';
import { getDb } from '../db.ts';
// Step 6 of the pipeline: record the outcome after the bank answered, as one SQL statement (one round trip,
// one implicit transaction): the order's move (layer 3: only if this attempt still holds the claim), the
// outcome on the dedup row (layer 4), and, for a payment, the outbox event for the receipt, which therefore
// exists exactly when the order was recorded PAID. The Prisma version (a transaction of three statements)
// cost five round trips; see bench/results.md.
import { statusesAllowing, targetOf } from '../defences/payment-transitions.ts';
import { PAYMENT_PAID } from '../events/outbox.ts';
import { Prisma } from '../generated/prisma/client.ts';
import type { Layers } from '../lab/settings.ts';
import type { PaymentOutcome } from './outcome.ts';

export async function recordOutcome(outcome: PaymentOutcome, attemptId: string, layers: Layers): Promise<void> {
  const { orderNo } = outcome;
  const event = outcome.status === 'PAID' ? 'charged' : 'declined';
  const json = JSON.stringify(outcome);
  const result =
    outcome.status === 'PAID'
      ? Prisma.sql`charge_id = ${outcome.chargeId}, paid_at = ${new Date(outcome.paidAt)}`
      : Prisma.sql`decline_reason = ${outcome.reason}`;
  // Without layer 3 nothing guards the row: the last request to finish writes its outcome over the first
  // one's. The card statement, not this row, shows how many charges there were.
  const guard = layers.stateMachine
    ? Prisma.sql`AND attempt_id = ${attemptId} AND status = ANY(${statusesAllowing(event)}::payment_status[])`
    : Prisma.empty;
  const dedup = layers.uniqueConstraint
    ? Prisma.sql`, dedup AS (
        UPDATE idempotent_record SET outcome = ${json}::jsonb
        WHERE biz_type = 'PAYMENT' AND biz_no = ${orderNo} AND outcome IS NULL)`
    : Prisma.empty;
  await getDb().$executeRaw`
    WITH moved AS (
      UPDATE orders SET status = ${targetOf(event)}::payment_status, ${result}, updated_at = now()
      WHERE order_no = ${orderNo} ${guard}
      RETURNING order_no)${dedup}
    INSERT INTO outbox (topic, key, payload)
    SELECT ${PAYMENT_PAID}, order_no, ${json}::jsonb FROM moved WHERE ${outcome.status === 'PAID'}`;
}
