import 'server-only';
// Layer 3: the payment state machine. The order is claimed before the bank is called, by a conditional
// update (`UPDATE orders SET status = 'PROCESSING' WHERE order_no = ? AND status = 'PENDING'`): one row
// changed means this request won; zero means another request already did, so read and return the
// current state. The claim raises the order's generation (`fence`), its fencing token; every later move is
// conditional on the status, on this attempt's id and on that token (lib/payments/order-claim.ts).
// Catches: every duplicate of every source for the same order, with no extra storage.
// Misses: nothing for an order; it needs a business object with clear states.
import type { Prisma } from '../generated/prisma/client.ts';
import { DuplicateRecordError, isUniqueViolation } from './dedup.ts';
import { statusesAllowing, targetOf } from './payment-transitions.ts';

type Tx = Prisma.TransactionClient;

/** The claim's fencing token when this attempt moved the order from PENDING to PROCESSING; else undefined. */
export async function claimOrder(tx: Tx, orderNo: string, attemptId: string, now: Date): Promise<number | undefined> {
  const [claimed] = await tx.$queryRaw<Array<{ fence: number }>>`
    UPDATE orders
    SET status = ${targetOf('claim')}::payment_status, attempt_id = ${attemptId}, claimed_at = ${now},
        unknown_since = NULL, fence = fence + 1, updated_at = now()
    WHERE order_no = ${orderNo} AND status = ANY(${statusesAllowing('claim')}::payment_status[])
    RETURNING fence`;
  return claimed?.fence;
}

/**
 * Layers 3 and 4 together, as one statement (one implicit transaction, one round trip): the conditional
 * update claims the order and, only if it did, the dedup row is inserted. The same two steps as
 * claimOrder + insertDedupRecord in a transaction, without four round trips (BEGIN, UPDATE, INSERT, COMMIT).
 * The claim's fencing token when this attempt claimed the order, else undefined; throws DuplicateRecordError
 * when the unique key refused the row (the whole statement, the update included, is then rolled back).
 */
export async function claimOrderWithDedupRow(
  tx: Tx,
  orderNo: string,
  attemptId: string,
  now: Date,
): Promise<number | undefined> {
  try {
    const [inserted] = await tx.$queryRaw<Array<{ fence: number }>>`
      WITH claim AS (
        UPDATE orders
        SET status = ${targetOf('claim')}::payment_status, attempt_id = ${attemptId}, claimed_at = ${now},
            unknown_since = NULL, fence = fence + 1, updated_at = now()
        WHERE order_no = ${orderNo} AND status = ANY(${statusesAllowing('claim')}::payment_status[])
        RETURNING order_no, fence)
      INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, claimed_at)
      SELECT 'PAYMENT', order_no, ${attemptId}, fence, ${now} FROM claim
      RETURNING fence`;
    return inserted?.fence;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicateRecordError('PAYMENT', orderNo);
    throw error;
  }
}
