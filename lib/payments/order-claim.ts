import 'server-only';
// The database's claim on an order (layer 3's PROCESSING or UNKNOWN state on the order, layer 4's dedup row,
// or both), as the recovery path reads and takes it over; an attempt's own writes on its claim (renew, record,
// release, keep) are in lib/defences/database-claim.ts. Each claim carries the holder, the fencing token (the
// order's generation), when it was taken or renewed, and since when its outcome is in doubt.
// Every write here is a compare-and-set on exactly what the writer inspected: the reconciler (or a duplicate)
// takes a dead claim over only if it is still the claim it judged dead, raising the token, and then settles,
// releases or resumes it only under its own id and token.
// The recovery path's writes run in one transaction each, with the order row locked first and the dedup
// row second (the order every statement here and in the claim takes them in), so they cannot deadlock.
import { getDb } from '../db.ts';
import type { OrderHold } from '../defences/defence.ts';
import type { ClaimState } from '../defences/fencing.ts';
import { outcomeFromOrder, type PaymentOutcome, parseOutcome } from '../defences/outcome.ts';
import { statusesAllowing, targetOf } from '../defences/payment-transitions.ts';
import { PAYMENT_PAID } from '../events/outbox.ts';
import type { PaymentStatus } from '../generated/prisma/client.ts';
import { Prisma } from '../generated/prisma/client.ts';

type Tx = Prisma.TransactionClient;

/** What an attempt (or a taker) holds: its id and the claim's fencing token. */
type Hold = OrderHold;

/** The order as the recovery path inspects it: its state, and its claims. */
export type ClaimView = {
  orderNo: string;
  amountCents: number;
  status: PaymentStatus;
  /** The order's generation (its fencing token); the dedup row carries the one it was claimed under. */
  fence: number;
  /** Its own lab settings (the lease), as stored. */
  lab: unknown;
  /** Who created it: its lab (an attendee's own) is the one its lease comes from. */
  owner: string | null;
  /** The final outcome, when the order or its dedup row records one. */
  recorded: PaymentOutcome | undefined;
  /** Layer 3's claim: the order PROCESSING or UNKNOWN. */
  order: ClaimState | null;
  /** Layer 4's claim: a dedup row without an outcome. */
  row: ClaimState | null;
  /** The dedup row as stored (with an outcome or not), to compare before writing. */
  rowKey: string | null;
};

type ViewRow = {
  orderNo: string;
  amountCents: number;
  status: PaymentStatus;
  attemptId: string | null;
  claimedAt: Date | null;
  fence: number;
  firstFence: number | null;
  unknownSince: Date | null;
  chargeId: string | null;
  paidAt: Date | null;
  declineReason: string | null;
  lab: unknown;
  owner: string | null;
};
type RowRow = {
  owner: string | null;
  fence: number;
  firstFence: number | null;
  claimedAt: Date;
  unknownSince: Date | null;
  outcome: unknown;
};

const ms = (date: Date | null) => (date ? date.getTime() : null);

function toView(order: ViewRow, row: RowRow | undefined): ClaimView {
  const recorded = outcomeFromOrder(order) ?? parseOutcome(row?.outcome);
  const claimed = order.status === 'PROCESSING' || order.status === 'UNKNOWN';
  return {
    orderNo: order.orderNo,
    amountCents: order.amountCents,
    status: order.status,
    fence: order.fence,
    lab: order.lab,
    owner: order.owner,
    recorded,
    order: claimed
      ? {
          holder: order.attemptId,
          fence: order.fence,
          firstFence: order.firstFence ?? order.fence,
          claimedAt: ms(order.claimedAt) ?? 0,
          unknownSince: ms(order.unknownSince),
        }
      : null,
    row:
      row && row.outcome === null
        ? {
            holder: row.owner,
            fence: row.fence,
            firstFence: row.firstFence ?? row.fence,
            claimedAt: row.claimedAt.getTime(),
            unknownSince: ms(row.unknownSince),
          }
        : null,
    rowKey: row ? JSON.stringify([row.owner, row.fence, row.claimedAt.getTime(), row.outcome !== null]) : null,
  };
}

const ORDER_COLUMNS = Prisma.sql`order_no AS "orderNo", amount_cents AS "amountCents", status, attempt_id AS "attemptId",
  claimed_at AS "claimedAt", fence, first_fence AS "firstFence", unknown_since AS "unknownSince",
  charge_id AS "chargeId", paid_at AS "paidAt",
  decline_reason AS "declineReason", lab, owner`;
const ROW_COLUMNS = Prisma.sql`owner, fence, first_fence AS "firstFence", claimed_at AS "claimedAt",
  unknown_since AS "unknownSince", outcome`;

async function selectView(db: Tx, orderNo: string, lock: 'none' | 'wait' | 'skip'): Promise<ClaimView | undefined> {
  const forUpdate = lock === 'none' ? Prisma.empty : Prisma.sql`FOR UPDATE`;
  const onOrder = lock === 'skip' ? Prisma.sql`FOR UPDATE SKIP LOCKED` : forUpdate;
  // The order row first, then the dedup row: the lock order of every writer.
  const [order] = await db.$queryRaw<ViewRow[]>`
    SELECT ${ORDER_COLUMNS} FROM orders WHERE order_no = ${orderNo} ${onOrder}`;
  if (!order) return undefined;
  const [row] = await db.$queryRaw<RowRow[]>`
    SELECT ${ROW_COLUMNS} FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = ${orderNo} ${forUpdate}`;
  return toView(order, row);
}

/** The order and its claims, as they are now (no lock). */
export async function readClaim(orderNo: string): Promise<ClaimView | undefined> {
  return selectView(getDb(), orderNo, 'none');
}

/** The claim that decides: the order's (layer 3) if it has one, else the dedup row's (layer 4). */
export function claimOf(view: ClaimView): ClaimState | null {
  return view.order ?? view.row;
}

function sameClaim(a: ClaimView, b: ClaimView): boolean {
  return (
    a.status === b.status &&
    a.fence === b.fence &&
    JSON.stringify(a.order) === JSON.stringify(b.order) &&
    a.rowKey === b.rowKey
  );
}

function heldBy(view: ClaimView, hold: Hold): boolean {
  const claims = [view.order, view.row].filter((claim) => claim !== null);
  return (
    view.fence === hold.fence &&
    claims.length > 0 &&
    claims.every((claim) => claim.holder === hold.attemptId && claim.fence === hold.fence)
  );
}

/**
 * Runs `write` with the order and its dedup row locked, if `check` still holds for them. `skip`: when the
 * order is locked by someone else, give up at once instead of waiting (twenty duplicates that find one dead
 * claim at once do not queue up behind each other: one takes it over, the others answer "in progress").
 */
async function whileLocked<T>(
  orderNo: string,
  check: (current: ClaimView) => boolean,
  write: (tx: Tx, current: ClaimView) => Promise<T>,
  lock: 'wait' | 'skip' = 'wait',
): Promise<T | undefined> {
  return getDb().$transaction(async (tx) => {
    const current = await selectView(tx, orderNo, lock);
    return current && check(current) ? write(tx, current) : undefined;
  });
}

// ---- The recovery path: a dead claim taken over, then settled, released, resumed or left in doubt -----

/**
 * Takes over the claim judged dead in `seen`, for `taker`: only if the order and its dedup row are still
 * exactly as seen. The claim's token is raised (the old holder's bank calls will be refused once the bank
 * has been asked under the new one), the order becomes UNKNOWN (its outcome is in doubt until the bank
 * answers). Returns the taker's hold, or undefined when someone moved first.
 */
export async function takeOverClaim(seen: ClaimView, taker: string, now: Date): Promise<Hold | undefined> {
  return whileLocked(
    seen.orderNo,
    (current) => sameClaim(current, seen),
    async (tx, current) => {
      const fence = current.fence + 1;
      const claimed = current.order !== null;
      // The chain's first token is kept (a claim from before first_fence existed: its own token).
      await tx.$executeRaw`
        UPDATE orders SET fence = ${fence}, updated_at = now(),
          status = ${claimed ? Prisma.sql`${targetOf('takenOver')}::payment_status` : Prisma.sql`status`},
          attempt_id = ${claimed ? taker : null}, claimed_at = ${claimed ? now : null},
          first_fence = ${claimed ? Prisma.sql`COALESCE(first_fence, fence)` : Prisma.sql`first_fence`}
        WHERE order_no = ${seen.orderNo}`;
      if (current.row) {
        await tx.$executeRaw`
          UPDATE idempotent_record SET owner = ${taker}, fence = ${fence}, claimed_at = ${now},
            first_fence = COALESCE(first_fence, fence)
          WHERE biz_type = 'PAYMENT' AND biz_no = ${seen.orderNo}`;
      }
      return { orderNo: seen.orderNo, attemptId: taker, fence };
    },
    'skip',
  );
}

/** The bank has the charge: the order is PAID by it, under the taker's claim. False if it lost the claim. */
export async function settleClaim(hold: Hold, outcome: PaymentOutcome & { status: 'PAID' }): Promise<boolean> {
  const settled = await whileLocked(
    hold.orderNo,
    (current) => heldBy(current, hold),
    async (tx, current) => {
      const [moved] = await tx.$queryRaw<Array<{ orderNo: string }>>`
        UPDATE orders SET status = ${targetOf('reconciledCharged')}::payment_status, charge_id = ${outcome.chargeId},
          paid_at = ${new Date(outcome.paidAt)}, attempt_id = NULL, claimed_at = NULL, unknown_since = NULL,
          updated_at = now()
        WHERE order_no = ${hold.orderNo} AND status = ANY(${statusesAllowing('reconciledCharged')}::payment_status[])
        RETURNING order_no AS "orderNo"`;
      if (current.row) {
        await tx.$executeRaw`
          UPDATE idempotent_record SET outcome = ${JSON.stringify(outcome)}::jsonb
          WHERE biz_type = 'PAYMENT' AND biz_no = ${hold.orderNo}`;
      }
      if (moved) {
        await tx.$executeRaw`
          INSERT INTO outbox (topic, key, payload, charge_id)
          VALUES (${PAYMENT_PAID}, ${hold.orderNo}, ${JSON.stringify(outcome)}::jsonb, ${outcome.chargeId})
          ON CONFLICT (topic, charge_id) DO NOTHING`;
      }
      return true;
    },
  );
  return settled === true;
}

/**
 * The taker's writes, under its claim only (holder and token, both rows locked): `order` sets these columns
 * on the order when the order is the claim (layer 3), `row` on the dedup row when there is one (layer 4),
 * or deletes it. False when the taker lost the claim meanwhile.
 */
async function underTakenClaim(
  hold: Hold,
  writes: { order: Prisma.Sql; row: Prisma.Sql | 'delete' },
): Promise<boolean> {
  const written = await whileLocked(
    hold.orderNo,
    (current) => heldBy(current, hold),
    async (tx, current) => {
      if (current.order) {
        await tx.$executeRaw`UPDATE orders SET ${writes.order}, updated_at = now() WHERE order_no = ${hold.orderNo}`;
      }
      if (current.row) {
        await (writes.row === 'delete'
          ? tx.$executeRaw`DELETE FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = ${hold.orderNo}`
          : tx.$executeRaw`UPDATE idempotent_record SET ${writes.row} WHERE biz_type = 'PAYMENT' AND biz_no = ${hold.orderNo}`);
      }
      return true;
    },
  );
  return written === true;
}

/** No charge, and none can land: nothing moved. The order is PENDING again, the dedup row gone. */
export function releaseTakenClaim(hold: Hold): Promise<boolean> {
  return underTakenClaim(hold, {
    order: Prisma.sql`status = ${targetOf('reconciledNoCharge')}::payment_status, attempt_id = NULL, claimed_at = NULL,
      unknown_since = NULL`,
    row: 'delete',
  });
}

/** No charge, and none can land (or the bank's key will catch it): the taker, a payment, goes on to pay. */
export function resumeTakenClaim(hold: Hold, now: Date): Promise<boolean> {
  return underTakenClaim(hold, {
    order: Prisma.sql`status = ${targetOf('resumed')}::payment_status, claimed_at = ${now}, unknown_since = NULL`,
    row: Prisma.sql`claimed_at = ${now}, unknown_since = NULL`,
  });
}

/**
 * No charge yet, and one may still land: the claim stays in doubt, and the taker lets go of it. `since`:
 * when the outcome came into doubt with the bank fenced (an earlier time, if one is recorded, is kept).
 */
export function leaveClaimInDoubt(hold: Hold, since: Date): Promise<boolean> {
  return underTakenClaim(hold, {
    order: Prisma.sql`attempt_id = NULL, unknown_since = COALESCE(unknown_since, ${since})`,
    row: Prisma.sql`owner = NULL, unknown_since = COALESCE(unknown_since, ${since})`,
  });
}

/**
 * The order is final but a dedup row still has no outcome (its holder died between the two writes, or the
 * layers changed in between): the row is given the order's outcome, if it is still the row that was seen.
 */
export async function completeStaleRow(seen: ClaimView, outcome: PaymentOutcome): Promise<void> {
  await whileLocked(
    seen.orderNo,
    (current) => current.rowKey === seen.rowKey && current.row !== null,
    (tx) => tx.$executeRaw`
      UPDATE idempotent_record SET outcome = ${JSON.stringify(outcome)}::jsonb
      WHERE biz_type = 'PAYMENT' AND biz_no = ${seen.orderNo} AND outcome IS NULL`,
  );
}

/**
 * A charge on the bank's settlement report that no order recorded (layers 3 and 4 were off, and the attempt
 * died after the charge, say): the order becomes PAID by it, with its payment.paid event, only if nothing holds
 * it (PENDING, or DECLINED by another attempt) and no dedup row keeps a claim in doubt (those are the claim's to
 * settle). Returns whether it moved.
 */
export async function recordUnrecordedCharge(outcome: PaymentOutcome & { status: 'PAID' }): Promise<boolean> {
  const [moved] = await getDb().$queryRaw<Array<{ moved: number }>>`
    WITH moved AS (
      UPDATE orders SET status = ${targetOf('reconciledCharged')}::payment_status, charge_id = ${outcome.chargeId},
        paid_at = ${new Date(outcome.paidAt)}, attempt_id = NULL, claimed_at = NULL, unknown_since = NULL,
        updated_at = now()
      WHERE order_no = ${outcome.orderNo} AND status IN ('PENDING', 'DECLINED')
        AND NOT EXISTS (
          SELECT 1 FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = ${outcome.orderNo} AND outcome IS NULL)
      RETURNING order_no),
    event AS (
      INSERT INTO outbox (topic, key, payload, charge_id)
      SELECT ${PAYMENT_PAID}, order_no, ${JSON.stringify(outcome)}::jsonb, ${outcome.chargeId} FROM moved
      ON CONFLICT (topic, charge_id) DO NOTHING)
    SELECT (SELECT count(*) FROM moved)::int AS moved`;
  return moved?.moved === 1;
}
