import 'server-only';
// Layer 4's mechanism, the unique key: a row (biz_type, biz_no) of the dedup table that the database refuses
// to hold twice, whatever got through the layers above. A payment's row is the order's claim
// (lib/defences/order-claim/store.ts); a receipt's (RECEIPT, order number) makes a redelivered event send
// nothing (lib/events/receipts.ts).
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
  // The hot path's statements (lib/db.ts hotPath): node-postgres's error, worded as the adapter words it, unwrapped.
  if (error instanceof Error && error.name === 'DriverAdapterError') {
    return (error.cause as { kind?: string } | undefined)?.kind === 'UniqueConstraintViolation';
  }
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2002') return true;
  const cause = (error.meta as { driverAdapterError?: { cause?: { kind?: string } } } | undefined)?.driverAdapterError
    ?.cause;
  return error.code === 'P2010' && cause?.kind === 'UniqueConstraintViolation';
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
