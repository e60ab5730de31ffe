import 'server-only';
// Layer 4: the unique constraint. A row (biz_type, biz_no) in the dedup table is inserted in the same
// transaction as the state claim; the database's unique key refuses a second one (P2002), whatever got
// through the layers above. The outcome is stored on the row when it is known, so a duplicate stopped
// here gets the first result, not just "already done".
// Catches: everything that got through the other layers: the last millimetre. Costs a write per payment.
import { Prisma } from '../generated/prisma/client.ts';

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
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2002') return true;
  const cause = (error.meta as { driverAdapterError?: { cause?: { kind?: string } } } | undefined)?.driverAdapterError
    ?.cause;
  return error.code === 'P2010' && cause?.kind === 'UniqueConstraintViolation';
}

export async function insertDedupRecord(tx: Tx, bizType: BizType, bizNo: string, owner: string): Promise<void> {
  try {
    await tx.idempotentRecord.create({ data: { bizType, bizNo, owner }, select: { id: true } });
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicateRecordError(bizType, bizNo);
    throw error;
  }
}

/** Stores the final outcome on the row, once. */
export async function storeDedupOutcome(
  tx: Tx,
  bizType: BizType,
  bizNo: string,
  outcome: Prisma.InputJsonValue,
): Promise<void> {
  await tx.idempotentRecord.updateMany({
    where: { bizType, bizNo, outcome: { equals: Prisma.AnyNull } },
    data: { outcome },
  });
}

/** Deletes the row of an attempt that failed before any money moved, if it is still that attempt's. */
export async function releaseDedupRecord(tx: Tx, bizType: BizType, bizNo: string, owner: string): Promise<void> {
  await tx.idempotentRecord.deleteMany({ where: { bizType, bizNo, owner, outcome: { equals: Prisma.AnyNull } } });
}

export async function readDedupRecord(tx: Tx, bizType: BizType, bizNo: string) {
  return tx.idempotentRecord.findUnique({
    where: { bizType_bizNo: { bizType, bizNo } },
    select: { owner: true, outcome: true, createdAt: true },
  });
}

/**
 * The table's cleanup: rows whose outcome is known and older than the retention window. After that a
 * duplicate of the same payment is no longer stopped here (layer 3 still stops it: the order is final).
 */
export async function deleteSettledDedupRecords(tx: Tx, olderThan: Date): Promise<number> {
  const { count } = await tx.idempotentRecord.deleteMany({
    where: { createdAt: { lt: olderThan }, NOT: { outcome: { equals: Prisma.AnyNull } } },
  });
  return count;
}
