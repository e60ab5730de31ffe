import 'server-only';
// Layer 4: the unique constraint. A row (biz_type, biz_no) in the dedup table is inserted in the same
// transaction as the state claim; the database's unique key refuses a second one (P2002), whatever got
// through the layers above. The outcome is stored on the row when it is known, so a duplicate stopped
// here gets the first result, not just "already done".
// Catches: everything that got through the other layers: the last millimetre. Costs a write per payment.
//
// What a duplicate stopped here gets: the outcome stored on the row (the first result, not just "already
// done"); "in progress" while the row has none, and a row whose holder died is taken over and settled by
// asking the bank. When the row is given back: it gets the outcome once the bank has answered; it is deleted
// when the bank refused before charging; it is kept without an outcome (in doubt) when the answer is unknown.
// The mechanics, shared with layer 3, are in lib/defences/database-claim.ts; with layer 3 on, the claim of
// both is one statement (lib/defences/payment-state.ts).
import { hotPath, type SqlRunner } from '../db.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { databaseDefence } from './database-claim.ts';
import type { Defence } from './defence.ts';

type Tx = Prisma.TransactionClient;

export type BizType = 'PAYMENT' | 'RECEIPT';

/** The unique key refused the row: this (bizType, bizNo) was already taken by another request. */
export class DuplicateRecordError extends Error {
  constructor(
    readonly bizType: BizType,
    readonly bizNo: string,
  ) {
    super(`duplicate ${bizType} ${bizNo}`);
    this.name = 'DuplicateRecordError';
  }
}

/**
 * A unique violation, as Prisma 7 with a driver adapter reports it: P2002 from a model query (its
 * `meta.target` is gone), or P2010 from a raw query whose driver error is a UniqueConstraintViolation.
 */
export function isUniqueViolation(error: unknown): boolean {
  // The hot path's statements go through the adapter alone (lib/db.ts hotPath): its own error, unwrapped.
  if (error instanceof Error && error.name === 'DriverAdapterError') {
    return (error.cause as { kind?: string } | undefined)?.kind === 'UniqueConstraintViolation';
  }
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2002') return true;
  const cause = (error.meta as { driverAdapterError?: { cause?: { kind?: string } } } | undefined)?.driverAdapterError
    ?.cause;
  return error.code === 'P2010' && cause?.kind === 'UniqueConstraintViolation';
}

/**
 * A payment's dedup row, as layer 4's claim on the order: its fencing token is the order's next generation
 * (raised in the same statement, so it keeps rising across rows deleted and inserted again). Returns the
 * token, or undefined when there is no such order (retention pruned it since the attempt read it); throws
 * DuplicateRecordError when the unique key refused the row (the statement is rolled back).
 */
export async function insertPaymentDedupRow(
  tx: SqlRunner,
  orderNo: string,
  owner: string,
  now: Date,
): Promise<number | undefined> {
  try {
    const [row] = await tx.$queryRaw<Array<{ fence: number }>>`
      WITH generation AS (UPDATE orders SET fence = fence + 1, updated_at = now() WHERE order_no = ${orderNo} RETURNING fence)
      INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at)
      SELECT 'PAYMENT', ${orderNo}, ${owner}, fence, fence, ${now} FROM generation
      RETURNING fence`;
    return row?.fence;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicateRecordError('PAYMENT', orderNo);
    throw error;
  }
}

/** Layer 4 alone as a defence: inserting the payment's dedup row is the claim. */
export function uniqueConstraintDefence(options: { bankKey: boolean }): Defence {
  return databaseDefence({
    stateMachine: false,
    uniqueConstraint: true,
    bankKey: options.bankKey,
    statement: (orderNo, attemptId, now) => insertPaymentDedupRow(hotPath(), orderNo, attemptId, now),
  });
}

/** A dedup row for another business type (RECEIPT): the unique key alone, no claim to fence. */
export async function insertDedupRecord(tx: Tx, bizType: BizType, bizNo: string, owner: string): Promise<void> {
  try {
    await tx.idempotentRecord.create({ data: { bizType, bizNo, owner }, select: { id: true } });
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicateRecordError(bizType, bizNo);
    throw error;
  }
}
