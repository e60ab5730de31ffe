import 'server-only';
// Layer 3: the payment state machine. The order is claimed before the bank is called, by a conditional
// update (`UPDATE orders SET status = 'PROCESSING' WHERE order_no = ? AND status = 'PENDING'`): one row
// changed means this request won; zero means another request already did, so read and return the
// current state. Every later move is conditional on the status and on this attempt's id.
// Catches: every duplicate of every source for the same order, with no extra storage.
// Misses: nothing for an order; it needs a business object with clear states.
import type { Prisma } from '../generated/prisma/client.ts';
import { DuplicateRecordError, isUniqueViolation } from './dedup.ts';
import { type PaymentEvent, statusesAllowing, targetOf } from './payment-transitions.ts';

type Tx = Prisma.TransactionClient;

/** True when this attempt moved the order from PENDING to PROCESSING. */
export async function claimOrder(tx: Tx, orderNo: string, attemptId: string, now: Date): Promise<boolean> {
  const { count } = await tx.order.updateMany({
    where: { orderNo, status: { in: statusesAllowing('claim') } },
    data: { status: targetOf('claim'), attemptId, claimedAt: now },
  });
  return count === 1;
}

/**
 * Layers 3 and 4 together, as one statement (one implicit transaction, one round trip): the conditional
 * update claims the order and, only if it did, the dedup row is inserted. The same two steps as
 * claimOrder + insertDedupRecord in a transaction, without four round trips (BEGIN, UPDATE, INSERT, COMMIT).
 * True when this attempt claimed the order; throws DuplicateRecordError when the unique key refused the row
 * (the whole statement, the update included, is then rolled back).
 */
export async function claimOrderWithDedupRow(tx: Tx, orderNo: string, attemptId: string, now: Date): Promise<boolean> {
  try {
    const inserted = await tx.$queryRaw<Array<{ id: number }>>`
      WITH claim AS (
        UPDATE orders
        SET status = ${targetOf('claim')}::payment_status, attempt_id = ${attemptId}, claimed_at = ${now}, updated_at = now()
        WHERE order_no = ${orderNo} AND status = ANY(${statusesAllowing('claim')}::payment_status[])
        RETURNING order_no)
      INSERT INTO idempotent_record (biz_type, biz_no, owner)
      SELECT 'PAYMENT', order_no, ${attemptId} FROM claim
      RETURNING id`;
    return inserted.length === 1;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicateRecordError('PAYMENT', orderNo);
    throw error;
  }
}

/**
 * Applies `event` to the order if its status allows it and, unless `attemptId` is null, if this attempt
 * still holds the claim. True when the row moved.
 */
export async function moveOrder(
  tx: Tx,
  orderNo: string,
  attemptId: string | null,
  event: PaymentEvent,
  data: Omit<Prisma.OrderUpdateManyMutationInput, 'status'> = {},
): Promise<boolean> {
  const { count } = await tx.order.updateMany({
    where: { orderNo, status: { in: statusesAllowing(event) }, ...(attemptId === null ? {} : { attemptId }) },
    data: { ...data, status: targetOf(event) },
  });
  return count === 1;
}
