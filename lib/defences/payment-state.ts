import 'server-only';
// Layer 3: the payment state machine. The order is claimed before the bank is called, by a conditional
// update (`UPDATE orders SET status = 'PROCESSING' WHERE order_no = ? AND status = 'PENDING'`): one row
// changed means this request won; zero means another request already did, so read and return the
// current state. The claim raises the order's generation (`fence`), its fencing token; every later move is
// conditional on the status, on this attempt's id and on that token (lib/payments/order-claim.ts).
// Catches: every duplicate of every source for the same order, with no extra storage.
// Misses: nothing for an order; it needs a business object with clear states.
//
// What a duplicate stopped here gets: the order's first outcome once it is final ("in progress" while the
// first request runs); a claim found dead is taken over and settled by asking the bank, never by guessing.
// When the claim is given back: PAID or DECLINED with the bank's answer; PENDING again when the bank refused
// before charging; UNKNOWN when its answer is unknown (the reconciler's). The mechanics, shared with layer 4,
// are in lib/defences/database-claim.ts; with layer 4 on, both claims are one statement (below).
import { hotPath, type SqlRunner } from '../db.ts';
import { databaseDefence } from './database-claim.ts';
import { DuplicateRecordError, isUniqueViolation } from './dedup.ts';
import type { Defence } from './defence.ts';
import { statusesAllowing, targetOf } from './payment-transitions.ts';

/** The claim's fencing token when this attempt moved the order from PENDING to PROCESSING; else undefined. */
export async function claimOrder(
  tx: SqlRunner,
  orderNo: string,
  attemptId: string,
  now: Date,
): Promise<number | undefined> {
  const [claimed] = await tx.$queryRaw<Array<{ fence: number }>>`
    UPDATE orders
    SET status = ${targetOf('claim')}::payment_status, attempt_id = ${attemptId}, claimed_at = ${now},
        unknown_since = NULL, fence = fence + 1, first_fence = fence + 1, updated_at = now()
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
  tx: SqlRunner,
  orderNo: string,
  attemptId: string,
  now: Date,
): Promise<number | undefined> {
  try {
    const [inserted] = await tx.$queryRaw<Array<{ fence: number }>>`
      WITH claim AS (
        UPDATE orders
        SET status = ${targetOf('claim')}::payment_status, attempt_id = ${attemptId}, claimed_at = ${now},
            unknown_since = NULL, fence = fence + 1, first_fence = fence + 1, updated_at = now()
        WHERE order_no = ${orderNo} AND status = ANY(${statusesAllowing('claim')}::payment_status[])
        RETURNING order_no, fence)
      INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at)
      SELECT 'PAYMENT', order_no, ${attemptId}, fence, fence, ${now} FROM claim
      RETURNING fence`;
    return inserted?.fence;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicateRecordError('PAYMENT', orderNo);
    throw error;
  }
}

/** Layer 3 alone as a defence: the conditional update is the claim. */
export function stateMachineDefence(options: { bankKey: boolean }): Defence {
  return databaseDefence({
    stateMachine: true,
    uniqueConstraint: false,
    bankKey: options.bankKey,
    statement: (orderNo, attemptId, now) => claimOrder(hotPath(), orderNo, attemptId, now),
  });
}

/** Layers 3 and 4 as one defence: one statement claims the order and inserts the dedup row, or neither. */
export function stateMachineAndDedupDefence(options: { bankKey: boolean }): Defence {
  return databaseDefence({
    stateMachine: true,
    uniqueConstraint: true,
    bankKey: options.bankKey,
    statement: (orderNo, attemptId, now) => claimOrderWithDedupRow(hotPath(), orderNo, attemptId, now),
  });
}
