import 'server-only';
// Layers 3 and 4's store: every SQL statement on the order's claim columns and on the payment's dedup row,
// each named after its transition. The claim is layer 3's PROCESSING or UNKNOWN state on the order, layer 4's
// dedup row, or both; it carries the holder, the fencing token (the order's generation), when it was taken
// or renewed, and since when its outcome is in doubt.
//   1. an attempt's own: claim, renew, record the outcome, release, keep in doubt (each conditional on the
//      attempt's id and token, one statement each);
//   2. the recovery path's (lib/payments/reconcile.ts decides, these write): read, take over, settle,
//      release, resume, leave in doubt, complete a stale row, record a charge nobody recorded.
// Every write here is a compare-and-set on exactly what the writer inspected: the reconciler (or a duplicate)
// takes a dead claim over only if it is still the claim it judged dead, raising the token, and then settles,
// releases or resumes it only under its own id and token.
// The recovery path's writes run in one transaction each, with the order row locked first and the dedup
// row second (the order every statement here and in the claim takes them in), so they cannot deadlock.
import { type Composed, composeEach, getDb, hotPath, type Slots } from '../../db.ts';
import { PAYMENT_PAID } from '../../events/outbox.ts';
import type { PaymentStatus } from '../../generated/prisma/client.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import type { OrderHold } from '../defence.ts';
import type { ClaimState } from '../fencing.ts';
import type { Layer, Layers } from '../layers.ts';
import { outcomeFromOrder, type PaymentOutcome, parseOutcome } from '../outcome.ts';
import { isUniqueViolation } from '../unique-key.ts';
import { type PaymentEvent, statusesAllowing, targetOf } from './transitions.ts';

type Tx = Prisma.TransactionClient;

// A status the transition table moves an order to and the receipt's topic are constants: they are written into a
// statement's text as literals, not sent as parameters bound and parsed on every run. The statuses a move is allowed
// from are a parameter, though: written as literals, they let the planner weigh the sweep's index on (status,
// claimed_at) against the order's key by the statistics, and where those were taken when every order was settled, a
// claim walked every PENDING order (test/scale/stale-statistics.int.test.ts; decision 038).
/** The status `event` moves an order to, as a literal. */
const target = (event: PaymentEvent) => Prisma.raw(`'${targetOf(event)}'::payment_status`);
/** The statuses `event` may move an order from, as a parameter (`status ${allowing(...)}`). */
const allowing = (event: PaymentEvent) => Prisma.sql`= ANY(${statusesAllowing(event)}::payment_status[])`;
/** The receipt's topic, as a literal. */
const PAID_TOPIC = Prisma.raw(`'${PAYMENT_PAID}'`);

// ─── 1. An attempt's claim ───

/** Which of layers 3 and 4 a database claim stands for. */
export type DatabaseLayers = Pick<Layers, 'stateMachine' | 'uniqueConstraint'>;

/** The lock name the order's fencing token is checked against at the bank. */
export function orderLock(orderNo: string): string {
  return `order:${orderNo}`;
}

/** What an attempt's claim came to: its fencing token, or the layer whose statement refused it (a value, not an error). */
export type ClaimTaken = { fence: number } | { refusedBy: Layer };

/**
 * Who claims, where nobody has checked yet that they may pay the order (pay.ts's `checkAtClaim`): the claim
 * then holds only for an order this caller may pay (its owner, one of the payers it let in, or an order with
 * no owner) at exactly this amount. Both never change once the order exists, but for the payers it lets in.
 */
export type Payer = { caller: string; amountCents: number };

/** An attempt's claim's values: the payer's only where the claim checks one. */
type ClaimValues = { orderNo: string; attemptId: string; now: Date; caller?: string; amountCents?: number };

/** The statement an attempt claims with: which of layers 3 and 4 claim, and whether it checks a payer. */
type ClaimShape = { claims: 'order' | 'orderAndRow' | 'row'; checksPayer: boolean };

/**
 * An attempt claims the order, with the statement its layers make: layer 3's conditional update, layer 4's
 * dedup row, or both in one statement (one round trip). "0 rows" is layer 3's refusal (also when the order is
 * gone: retention pruned it since the attempt read it; and, with `payer`, when it is not that payer's to pay at
 * that amount); a unique violation (P2002) is layer 4's (the whole statement, the update included, is then
 * rolled back).
 */
export async function claimOrder(
  layers: DatabaseLayers,
  orderNo: string,
  attemptId: string,
  now: Date,
  payer?: Payer,
): Promise<ClaimTaken> {
  const { statement, values } = claimStatementFor(layers, { orderNo, attemptId, now, ...payer });
  try {
    const [claimed] = await hotPath().run<Array<{ fence: number }>, ClaimValues>(statement, values);
    return claimed ? { fence: claimed.fence } : { refusedBy: 'stateMachine' };
  } catch (error) {
    if (layers.uniqueConstraint && isUniqueViolation(error)) return { refusedBy: 'uniqueConstraint' };
    throw error;
  }
}

/** claimOrder's statement and its values (test/scale/stale-statistics.int.test.ts runs its plan). */
export function claimStatementFor(
  layers: DatabaseLayers,
  values: ClaimValues,
): { statement: Composed<ClaimValues>; values: ClaimValues } {
  const claims = !layers.uniqueConstraint ? 'order' : layers.stateMachine ? 'orderAndRow' : 'row';
  return { statement: claimStatement({ claims, checksPayer: values.caller !== undefined }), values };
}

const claimStatement = composeEach(
  ({ claims, checksPayer }: ClaimShape) => `${claims}:${checksPayer}`,
  ({ claims, checksPayer }: ClaimShape, values: Slots<ClaimValues>) => {
    const payable = checksPayer ? payableBy(values) : Prisma.empty;
    if (claims === 'order') return claimOrderState(values, payable);
    return claims === 'orderAndRow'
      ? claimOrderStateAndDedupRow(values, payable)
      : insertPaymentDedupRow(values, payable);
  },
);

function payableBy({ caller, amountCents }: Slots<ClaimValues>): Prisma.Sql {
  return Prisma.sql`AND amount_cents = ${amountCents} AND (owner IS NULL OR owner = ${caller} OR ${caller} = ANY(payers))`;
}

/** Layer 3: the claim's fencing token when this attempt moved the order from PENDING to PROCESSING; else no row. */
function claimOrderState({ orderNo, attemptId, now }: Slots<ClaimValues>, payable: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    UPDATE orders
    SET status = ${target('claim')}, attempt_id = ${attemptId}, claimed_at = ${now},
        unknown_since = NULL, fence = fence + 1, first_fence = fence + 1, updated_at = now()
    WHERE order_no = ${orderNo} AND status ${allowing('claim')} ${payable}
    RETURNING fence`;
}

/**
 * Layers 3 and 4 together, as one statement (one implicit transaction, one round trip): the conditional
 * update claims the order and, only if it did, the dedup row is inserted. The same two steps as
 * claimOrder + insertDedupRecord in a transaction, without four round trips (BEGIN, UPDATE, INSERT, COMMIT).
 * The claim's fencing token when this attempt claimed the order, else no row.
 */
function claimOrderStateAndDedupRow({ orderNo, attemptId, now }: Slots<ClaimValues>, payable: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    WITH claim AS (
      UPDATE orders
      SET status = ${target('claim')}, attempt_id = ${attemptId}, claimed_at = ${now},
          unknown_since = NULL, fence = fence + 1, first_fence = fence + 1, updated_at = now()
      WHERE order_no = ${orderNo} AND status ${allowing('claim')} ${payable}
      RETURNING order_no, fence)
    INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at)
    SELECT 'PAYMENT', order_no, ${attemptId}, fence, fence, ${now} FROM claim
    RETURNING fence`;
}

/**
 * A payment's dedup row, as layer 4's claim on the order: its fencing token is the order's next generation
 * (raised in the same statement, so it keeps rising across rows deleted and inserted again). The token, or no
 * row when there is no such order (retention pruned it since the attempt read it).
 */
function insertPaymentDedupRow({ orderNo, attemptId, now }: Slots<ClaimValues>, payable: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    WITH generation AS (
      UPDATE orders SET fence = fence + 1, updated_at = now() WHERE order_no = ${orderNo} ${payable} RETURNING fence)
    INSERT INTO idempotent_record (biz_type, biz_no, owner, fence, first_fence, claimed_at)
    SELECT 'PAYMENT', ${orderNo}, ${attemptId}, fence, fence, ${now} FROM generation
    RETURNING fence`;
}

/** An outcome written over the order with no claim to check (layers 3 and 4 off). */
export async function recordUnguarded(outcome: PaymentOutcome): Promise<void> {
  await recordOutcome(outcome, undefined, { stateMachine: false, uniqueConstraint: false });
}

/** Renews the attempt's claims (after a long pause, before the bank); false when it lost one of them. */
export async function renewClaim(hold: OrderHold, layers: DatabaseLayers, now: Date): Promise<boolean> {
  const [renewed] = await getDb().$queryRaw<Array<{ order: number; row: number }>>`
    WITH o AS (
      UPDATE orders SET claimed_at = ${now}
      WHERE order_no = ${hold.orderNo} AND attempt_id = ${hold.attemptId} AND fence = ${hold.fence} AND status = 'PROCESSING'
      RETURNING 1),
    r AS (
      UPDATE idempotent_record SET claimed_at = ${now}
      WHERE biz_type = 'PAYMENT' AND biz_no = ${hold.orderNo} AND owner = ${hold.attemptId} AND fence = ${hold.fence}
        AND outcome IS NULL
      RETURNING 1)
    SELECT (SELECT count(*) FROM o)::int AS "order", (SELECT count(*) FROM r)::int AS "row"`;
  return (!layers.stateMachine || renewed?.order === 1) && (!layers.uniqueConstraint || renewed?.row === 1);
}

/** The bank failed before charging: nothing moved, the attempt gives its claims back. */
export async function releaseClaim(hold: OrderHold): Promise<void> {
  await getDb().$executeRaw`
    WITH o AS (
      UPDATE orders SET status = ${target('failedBeforeCharge')}, attempt_id = NULL, claimed_at = NULL,
        updated_at = now()
      WHERE order_no = ${hold.orderNo} AND attempt_id = ${hold.attemptId} AND fence = ${hold.fence}
        AND status ${allowing('failedBeforeCharge')}
      RETURNING 1)
    DELETE FROM idempotent_record
    WHERE biz_type = 'PAYMENT' AND biz_no = ${hold.orderNo} AND owner = ${hold.attemptId} AND fence = ${hold.fence}
      AND outcome IS NULL`;
}

/**
 * The bank did not answer: the outcome is unknown. The attempt keeps the claim in doubt (the order UNKNOWN,
 * the dedup row without an outcome), so no retry can charge again, and lets go of it: the reconciler may
 * take it over at once. The settlement window runs from now (the request was sent before).
 */
export async function keepClaimUnknown(hold: OrderHold, now: Date): Promise<void> {
  await getDb().$executeRaw`
    WITH o AS (
      UPDATE orders SET status = ${target('timedOut')}, attempt_id = NULL, unknown_since = ${now},
        updated_at = now()
      WHERE order_no = ${hold.orderNo} AND attempt_id = ${hold.attemptId} AND fence = ${hold.fence}
        AND status ${allowing('timedOut')}
      RETURNING 1)
    UPDATE idempotent_record SET owner = NULL, unknown_since = ${now}
    WHERE biz_type = 'PAYMENT' AND biz_no = ${hold.orderNo} AND owner = ${hold.attemptId} AND fence = ${hold.fence}
      AND outcome IS NULL`;
}

/**
 * Records the bank's answer as one SQL statement (one round trip): the order's move
 * (layer 3: only under this attempt's claim), the outcome on the dedup row (layer 4: only under this
 * attempt's claim), and, for a payment, the outbox event for the receipt: one per charge (its unique key),
 * whoever records the charge and however often. Returns whether the attempt's claim was still its own.
 * Without layer 3 nothing guards the order: the last request to finish writes its outcome over the first
 * one's. The card statement, not this row, shows how many charges there were.
 */
export async function recordOutcome(
  outcome: PaymentOutcome,
  hold: OrderHold | undefined,
  layers: DatabaseLayers,
): Promise<boolean> {
  const { statement, values } = recordStatement(outcome, hold, layers);
  const [recorded] = await hotPath().run<Array<{ order: boolean; row: boolean }>, RecordValues>(statement, values);
  return (!layers.stateMachine || recorded?.order === true) && (!layers.uniqueConstraint || recorded?.row === true);
}

/** The record's values (the claim's, where it has one). */
type RecordValues = {
  orderNo: string;
  json: string;
  chargeId?: string;
  paidAt?: Date;
  declineReason?: string;
  attemptId?: string;
  fence?: number;
};

/** The statement a record is written with: the outcome's kind, whether a claim guards it, and which layers are on. */
type RecordShape = { status: PaymentOutcome['status']; held: boolean } & DatabaseLayers;

/** recordOutcome's statement and its values (test/scale/in-doubt.int.test.ts runs its plan). */
export function recordStatement(
  outcome: PaymentOutcome,
  hold: OrderHold | undefined,
  layers: DatabaseLayers,
): { statement: Composed<RecordValues>; values: RecordValues } {
  const { status, orderNo } = outcome;
  const statement = recordStatementOf({ status, held: hold !== undefined, ...layers });
  const json = JSON.stringify(outcome);
  const result =
    outcome.status === 'PAID'
      ? { chargeId: outcome.chargeId, paidAt: new Date(outcome.paidAt) }
      : { declineReason: outcome.reason };
  return { statement, values: { orderNo, json, ...result, attemptId: hold?.attemptId, fence: hold?.fence } };
}

const recordStatementOf = composeEach(
  ({ status, held, stateMachine, uniqueConstraint }: RecordShape) =>
    `${status}:${held}:${stateMachine}:${uniqueConstraint}`,
  ({ status, held, stateMachine, uniqueConstraint }: RecordShape, values: Slots<RecordValues>): Prisma.Sql => {
    const { orderNo, json, chargeId, attemptId, fence } = values;
    const event = status === 'PAID' ? 'charged' : 'declined';
    const result =
      status === 'PAID'
        ? Prisma.sql`charge_id = ${chargeId}, paid_at = ${values.paidAt}`
        : Prisma.sql`decline_reason = ${values.declineReason}`;
    const claimed = (holder: Prisma.Sql) =>
      held ? Prisma.sql`AND ${holder} = ${attemptId} AND fence = ${fence}` : Prisma.sql`AND FALSE`;
    // Layer 3 guards the order with the claim. Without it the write is unguarded, but a decline never lands on
    // a charge: a stale attempt's DECLINED must not overwrite another attempt's PAID.
    const guard = stateMachine
      ? Prisma.sql`${claimed(Prisma.sql`attempt_id`)} AND status ${allowing(event)}`
      : status === 'DECLINED'
        ? Prisma.sql`AND status <> 'PAID'`
        : Prisma.empty;
    const dedup = uniqueConstraint
      ? Prisma.sql`UPDATE idempotent_record SET outcome = ${json}::jsonb
          WHERE biz_type = 'PAYMENT' AND biz_no = ${orderNo} AND outcome IS NULL ${claimed(Prisma.sql`owner`)}
          RETURNING 1`
      : Prisma.sql`SELECT 1 WHERE FALSE`;
    // A charge's receipt: one outbox event per charge (its unique key), whoever records it and however often.
    const receipt =
      status === 'PAID'
        ? Prisma.sql`, event AS (
            INSERT INTO outbox (topic, key, payload, charge_id)
            SELECT ${PAID_TOPIC}, order_no, ${json}::jsonb, ${chargeId} FROM moved
            ON CONFLICT (topic, charge_id) DO NOTHING)`
        : Prisma.empty;
    return Prisma.sql`
      WITH moved AS (
        UPDATE orders SET status = ${target(event)}, ${result}, attempt_id = NULL, claimed_at = NULL,
          unknown_since = NULL, updated_at = now()
        WHERE order_no = ${orderNo} ${guard}
        RETURNING order_no),
      dedup AS (${dedup})${receipt}
      SELECT EXISTS (SELECT FROM moved) AS "order", EXISTS (SELECT FROM dedup) AS "row"`;
  },
);

// ─── 2. The recovery path ───

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

function heldBy(view: ClaimView, hold: OrderHold): boolean {
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
export async function takeOverClaim(seen: ClaimView, taker: string, now: Date): Promise<OrderHold | undefined> {
  return whileLocked(
    seen.orderNo,
    (current) => sameClaim(current, seen),
    async (tx, current) => {
      const fence = current.fence + 1;
      const claimed = current.order !== null;
      // The chain's first token is kept (a claim from before first_fence existed: its own token).
      await tx.$executeRaw`
        UPDATE orders SET fence = ${fence}, updated_at = now(),
          status = ${claimed ? target('takenOver') : Prisma.sql`status`},
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
export async function settleClaim(hold: OrderHold, outcome: PaymentOutcome & { status: 'PAID' }): Promise<boolean> {
  const settled = await whileLocked(
    hold.orderNo,
    (current) => heldBy(current, hold),
    async (tx, current) => {
      const [moved] = await tx.$queryRaw<Array<{ orderNo: string }>>`
        UPDATE orders SET status = ${target('reconciledCharged')}, charge_id = ${outcome.chargeId},
          paid_at = ${new Date(outcome.paidAt)}, attempt_id = NULL, claimed_at = NULL, unknown_since = NULL,
          updated_at = now()
        WHERE order_no = ${hold.orderNo} AND status ${allowing('reconciledCharged')}
        RETURNING order_no AS "orderNo"`;
      if (current.row) {
        await tx.$executeRaw`
          UPDATE idempotent_record SET outcome = ${JSON.stringify(outcome)}::jsonb
          WHERE biz_type = 'PAYMENT' AND biz_no = ${hold.orderNo}`;
      }
      if (moved) {
        await tx.$executeRaw`
          INSERT INTO outbox (topic, key, payload, charge_id)
          VALUES (${PAID_TOPIC}, ${hold.orderNo}, ${JSON.stringify(outcome)}::jsonb, ${outcome.chargeId})
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
  hold: OrderHold,
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
export function releaseTakenClaim(hold: OrderHold): Promise<boolean> {
  return underTakenClaim(hold, {
    order: Prisma.sql`status = ${target('reconciledNoCharge')}, attempt_id = NULL, claimed_at = NULL,
      unknown_since = NULL`,
    row: 'delete',
  });
}

/** No charge, and none can land (or the bank's key will catch it): the taker, a payment, goes on to pay. */
export function resumeTakenClaim(hold: OrderHold, now: Date): Promise<boolean> {
  return underTakenClaim(hold, {
    order: Prisma.sql`status = ${target('resumed')}, claimed_at = ${now}, unknown_since = NULL`,
    row: Prisma.sql`claimed_at = ${now}, unknown_since = NULL`,
  });
}

/**
 * No charge yet, and one may still land: the claim stays in doubt, and the taker lets go of it. `since`:
 * when the outcome came into doubt with the bank fenced (an earlier time, if one is recorded, is kept).
 */
export function leaveClaimInDoubt(hold: OrderHold, since: Date): Promise<boolean> {
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
      UPDATE orders SET status = ${target('reconciledCharged')}, charge_id = ${outcome.chargeId},
        paid_at = ${new Date(outcome.paidAt)}, attempt_id = NULL, claimed_at = NULL, unknown_since = NULL,
        updated_at = now()
      WHERE order_no = ${outcome.orderNo} AND status IN ('PENDING', 'DECLINED')
        AND NOT EXISTS (
          SELECT 1 FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = ${outcome.orderNo} AND outcome IS NULL)
      RETURNING order_no),
    event AS (
      INSERT INTO outbox (topic, key, payload, charge_id)
      SELECT ${PAID_TOPIC}, order_no, ${JSON.stringify(outcome)}::jsonb, ${outcome.chargeId} FROM moved
      ON CONFLICT (topic, charge_id) DO NOTHING)
    SELECT (SELECT count(*) FROM moved)::int AS moved`;
  return moved?.moved === 1;
}

/**
 * The sweep's candidates, found with each order's own lease (the default one unless its settings say
 * otherwise), `patience` leases long: claims abandoned that long (the sweep leaves the first lease to the
 * payers), unknown outcomes nobody holds, and, at start-up, this instance's previous life's claims
 * (`previousLifeOf`: the instance's attempt-id prefix). Each is judged again before anything is written.
 */
export async function findDeadClaims(query: {
  at: Date;
  defaultLeaseMs: number;
  patience: number;
  previousLifeOf?: string;
  orderNos?: string[];
}): Promise<Set<string>> {
  const { at, defaultLeaseMs, patience, previousLifeOf, orderNos } = query;
  const leaseOf = (lab: Prisma.Sql) =>
    Prisma.sql`(CASE WHEN (${lab}->'claims'->>'leaseMs') ~ '^[0-9]{1,9}$' THEN (${lab}->'claims'->>'leaseMs')::int
      ELSE ${defaultLeaseMs}::int END) * ${patience}::int * interval '1 millisecond'`;
  const previousLife = (holder: Prisma.Sql) =>
    previousLifeOf ? Prisma.sql`OR ${holder} LIKE ${`${previousLifeOf}%`}` : Prisma.empty;
  const only = (column: Prisma.Sql) => (orderNos ? Prisma.sql`AND ${column} = ANY(${orderNos}::text[])` : Prisma.empty);
  const db = getDb();
  const [orders, rows] = await Promise.all([
    db.$queryRaw<Array<{ orderNo: string }>>`
      SELECT order_no AS "orderNo" FROM orders
      WHERE status IN ('PROCESSING', 'UNKNOWN') ${only(Prisma.sql`order_no`)}
        AND (attempt_id IS NULL OR claimed_at < ${at}::timestamptz - ${leaseOf(Prisma.sql`lab`)} ${previousLife(Prisma.sql`attempt_id`)})
      LIMIT 500`,
    // The rows in doubt first, by their partial index (idempotent_record_in_doubt_idx), then each one's order by
    // its key (LATERAL … LIMIT 1: never a join the planner may turn into a scan of every order). Joined at once,
    // the planner walked every PAYMENT row in the orders' key order instead: a receipt's row has no outcome
    // either, so it expects half of them in doubt (10^5 rows read for none found, test/scale).
    db.$queryRaw<Array<{ orderNo: string }>>`
      WITH r AS MATERIALIZED (
        SELECT biz_no, owner, claimed_at FROM idempotent_record
        WHERE biz_type = 'PAYMENT' AND outcome IS NULL ${only(Prisma.sql`biz_no`)})
      SELECT r.biz_no AS "orderNo" FROM r CROSS JOIN LATERAL (SELECT lab FROM orders WHERE order_no = r.biz_no LIMIT 1) o
      WHERE r.owner IS NULL OR r.claimed_at < ${at}::timestamptz - ${leaseOf(Prisma.sql`o.lab`)} ${previousLife(Prisma.sql`r.owner`)}
      LIMIT 500`,
  ]);
  return new Set([...orders, ...rows].map((row) => row.orderNo));
}

/** Of these orders, those that record no charge (PENDING, or DECLINED by another attempt). */
export async function ordersWithoutTheirCharge(orderNos: string[]): Promise<Array<{ orderNo: string }>> {
  return getDb().$queryRaw<Array<{ orderNo: string }>>`
    SELECT order_no AS "orderNo" FROM orders
    WHERE order_no = ANY(${orderNos}::text[]) AND status IN ('PENDING', 'DECLINED')`;
}
