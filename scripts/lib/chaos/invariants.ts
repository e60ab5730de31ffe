// The chaos storm's invariants, checked in SQL on the bench database once every order is settled: at most one
// charge per order, every charge recorded, every answer true to the bank's ledger, one event and one receipt
// per charge. A failing order is told with its history.
import type pg from 'pg';
import type { Attempt, Caller, RefundCaller } from './drive.ts';
import { type PlannedOrder, SETTLE_TIMEOUT_MS } from './plan.ts';

export type InvariantCheck = { name: string; failing: string[] };

export type OrderHistory = {
  orderNo: string;
  fault: string;
  faultClearedAt?: number;
  order: unknown;
  dedupRow: unknown;
  charges: unknown[];
  outboxEvents: number;
  callers: Array<{ clientId: string; key: string; attempts: string[] }>;
  /** Its refunds, if the storm asked for any: the merchant's rows, the bank's, and every refund caller's requests. */
  refunds?: { rows: unknown[]; bank: unknown[]; ledger: unknown };
};

/** The invariants, each as the orders that break it. */
export async function checkInvariants(db: pg.Pool, orderNos: string[], callers: Caller[], settled: boolean) {
  const failing = async (sql: string, params: unknown[] = [orderNos]) =>
    (await db.query<{ order_no: string }>(sql, params)).rows.map((row) => row.order_no);
  const charged = 'EXISTS (SELECT 1 FROM bank_charges c WHERE c.merchant_ref = o.order_no)';
  const checks: InvariantCheck[] = [
    {
      name: 'at most one charge per order (bank_charges, merchant_ref = order_no)',
      failing: await failing(
        `SELECT merchant_ref AS order_no FROM bank_charges WHERE merchant_ref = ANY($1) GROUP BY 1 HAVING count(*) > 1`,
      ),
    },
    {
      name: 'every order with a charge is PAID, its charge_id one of its charges',
      failing: await failing(
        `SELECT order_no FROM orders o WHERE order_no = ANY($1) AND ${charged} AND (status <> 'PAID'
           OR NOT EXISTS (SELECT 1 FROM bank_charges c WHERE c.merchant_ref = o.order_no AND c.id = o.charge_id))`,
      ),
    },
    {
      name: 'every order without a charge is PENDING or DECLINED',
      failing: await failing(
        `SELECT order_no FROM orders o WHERE order_no = ANY($1) AND NOT ${charged} AND status NOT IN ('PENDING', 'DECLINED')`,
      ),
    },
    {
      name: 'every 201/200 answer names a charge of its order that exists',
      failing: await answersWithoutCharge(db, callers),
    },
    {
      // A fault the app could not name (README: "never a 500"): an outage is a 503 naming the service.
      name: 'no answer was a 5xx other than 503',
      failing: [
        ...new Set(
          callers
            .filter((caller) =>
              caller.attempts.some((t) => t.status !== undefined && t.status >= 500 && t.status !== 503),
            )
            .map((caller) => caller.orderNo),
        ),
      ],
    },
    {
      // The receipt's event: written with the move to PAID, one per charge (lib/events/outbox.ts).
      name: 'one payment.paid outbox event per PAID order, for its charge; none for the others',
      failing: await failing(
        `SELECT o.order_no FROM orders o LEFT JOIN outbox x ON x.key = o.order_no AND x.topic = 'payment.paid'
         WHERE o.order_no = ANY($1) GROUP BY o.order_no, o.status, o.charge_id
         HAVING count(x.id) <> CASE WHEN o.status = 'PAID' THEN 1 ELSE 0 END
           OR count(x.id) FILTER (WHERE x.payload ->> 'chargeId' IS DISTINCT FROM o.charge_id) > 0`,
      ),
    },
    {
      // Every event relayed to the stream and delivered once to the send-receipt consumer (lib/events/).
      name: 'one receipt per charge: each PAID order has exactly one, for its charge; no other order has any',
      failing: await failing(
        `SELECT o.order_no FROM orders o LEFT JOIN receipts r ON r.order_no = o.order_no
         WHERE o.order_no = ANY($1) GROUP BY o.order_no, o.status, o.charge_id
         HAVING count(r.id) <> CASE WHEN o.status = 'PAID' THEN 1 ELSE 0 END
           OR count(r.id) FILTER (WHERE r.charge_id IS DISTINCT FROM o.charge_id) > 0`,
      ),
    },
    {
      name: "every PAID order's dedup row records its charge, where layer 4 is on",
      failing: await failing(
        `SELECT o.order_no FROM orders o LEFT JOIN idempotent_record r ON r.biz_type = 'PAYMENT' AND r.biz_no = o.order_no
         WHERE o.order_no = ANY($1) AND o.status = 'PAID' AND (o.lab -> 'layers' ->> 'uniqueConstraint') = 'true'
           AND (r.outcome ->> 'chargeId') IS DISTINCT FROM o.charge_id`,
      ),
    },
    {
      name: `every order settled within ${SETTLE_TIMEOUT_MS / 1000} s (no claim, no dedup row without an outcome, no charge still to land)`,
      failing: settled
        ? []
        : await failing(
            `SELECT order_no FROM orders o WHERE order_no = ANY($1) AND (status IN ('PROCESSING', 'UNKNOWN')
               OR EXISTS (SELECT 1 FROM idempotent_record r WHERE r.biz_type = 'PAYMENT' AND r.biz_no = o.order_no AND r.outcome IS NULL)
               OR EXISTS (SELECT 1 FROM bank_charges c WHERE c.merchant_ref = o.order_no AND c.created_at > now()))`,
          ),
    },
  ];
  return checks;
}

/** The order of a bank refund: its merchant reference is `<order no>/<refund key>` (lib/defences/refund.ts). */
const REFUND_ORDER = "split_part(b.merchant_ref, '/', 1)";

/**
 * The refunds' invariants, for the orders whose refunds the storm asked for: never two bank refunds for one refund,
 * never more refunded than charged, every bank refund recorded, the ledger true to the bank's refunds where a
 * database layer keeps it, every answer true to the bank, and nothing left under way.
 */
export async function checkRefundInvariants(
  db: pg.Pool,
  orderNos: string[],
  callers: RefundCaller[],
): Promise<InvariantCheck[]> {
  const failing = async (sql: string) =>
    (await db.query<{ order_no: string }>(sql, [orderNos])).rows.map((row) => row.order_no);
  const refunded = `(SELECT coalesce(sum(b.amount_cents), 0) FROM bank_refunds b WHERE ${REFUND_ORDER} = o.order_no)`;
  return [
    {
      name: 'refunds: at most one bank refund per refund (its order and request id)',
      failing: await failing(
        `SELECT DISTINCT ${REFUND_ORDER} AS order_no FROM bank_refunds b WHERE ${REFUND_ORDER} = ANY($1)
         GROUP BY b.merchant_ref HAVING count(*) > 1`,
      ),
    },
    {
      name: 'refunds: never more refunded at the bank than charged, and only of the order’s charge',
      failing: await failing(
        `SELECT o.order_no FROM orders o WHERE o.order_no = ANY($1) AND (${refunded} > o.amount_cents
           OR EXISTS (SELECT 1 FROM bank_refunds b WHERE ${REFUND_ORDER} = o.order_no AND b.charge_id IS DISTINCT FROM o.charge_id))`,
      ),
    },
    {
      name: 'refunds: every bank refund recorded (its refund SUCCEEDED with its id); none left under way or in doubt',
      failing: await failing(
        `SELECT ${REFUND_ORDER} AS order_no FROM bank_refunds b WHERE ${REFUND_ORDER} = ANY($1) AND NOT EXISTS (
           SELECT 1 FROM refunds r WHERE r.order_no || '/' || r.refund_key = b.merchant_ref
             AND r.status = 'SUCCEEDED' AND r.bank_refund_id = b.id)
         UNION SELECT order_no FROM refunds WHERE order_no = ANY($1) AND status IN ('PROCESSING', 'UNKNOWN')`,
      ),
    },
    {
      name: 'refunds: the ledger (orders.refunded_cents) is what the bank refunded, where layer 3 or 4 is on',
      failing: await failing(
        `SELECT o.order_no FROM orders o WHERE o.order_no = ANY($1) AND o.refunded_cents <> ${refunded}
           AND ((o.lab -> 'layers' ->> 'stateMachine') = 'true' OR (o.lab -> 'layers' ->> 'uniqueConstraint') = 'true')`,
      ),
    },
    {
      name: 'refunds: every 201/200 names a bank refund of its order for the amount asked; one request id, one refund told',
      failing: await refundsUntrue(db, callers),
    },
    {
      name: 'refunds: every final answer a refund or "more than is left" (with what is left); no 5xx other than 503',
      failing: [
        ...new Set(
          callers
            .filter(
              (caller) =>
                caller.attempts.some((t) => t.status !== undefined && t.status >= 500 && t.status !== 503) ||
                (caller.final &&
                  caller.final.status !== 200 &&
                  caller.final.status !== 201 &&
                  !(
                    caller.final.type === '/problems/refund-exceeds-charge' &&
                    caller.final.leftCents !== undefined &&
                    caller.final.leftCents < caller.amountCents
                  )),
            )
            .map((caller) => caller.orderNo),
        ),
      ],
    },
  ];
}

/** Orders where a refund's caller was told a refund the bank never made, or two callers of one id two refunds. */
async function refundsUntrue(db: pg.Pool, callers: RefundCaller[]): Promise<string[]> {
  const told = callers.filter((c) => c.final?.status === 200 || c.final?.status === 201);
  const ids = told.map((c) => c.final?.refundId).filter((id): id is string => id !== undefined);
  const { rows } = await db.query<{ id: string; merchant_ref: string; amount_cents: number }>(
    'SELECT id, merchant_ref, amount_cents FROM bank_refunds WHERE id = ANY($1)',
    [ids],
  );
  const bank = new Map(rows.map((row) => [row.id, row]));
  const firstTold = new Map<string, string | undefined>();
  const bad = told.filter((c) => {
    const made = c.final?.refundId ? bank.get(c.final.refundId) : undefined;
    const id = `${c.orderNo}/${c.requestId}`;
    const other = firstTold.get(id);
    firstTold.set(id, other ?? c.final?.refundId);
    return (
      !made ||
      made.merchant_ref !== id ||
      made.amount_cents !== c.amountCents ||
      c.final?.orderNo !== c.orderNo ||
      (other !== undefined && other !== c.final?.refundId)
    );
  });
  return [...new Set(bad.map((c) => c.orderNo))];
}

/** Orders where a client was told 201/200 with a charge that is not on the order's statement. */
export async function answersWithoutCharge(db: pg.Pool, callers: Caller[]): Promise<string[]> {
  const paid = callers.filter((c) => c.final && (c.final.status === 200 || c.final.status === 201));
  const ids = paid.map((c) => c.final?.chargeId).filter((id): id is string => id !== undefined);
  const { rows } = await db.query<{ id: string; merchant_ref: string }>(
    'SELECT id, merchant_ref FROM bank_charges WHERE id = ANY($1)',
    [ids],
  );
  const owner = new Map(rows.map((row) => [row.id, row.merchant_ref]));
  const bad = paid.filter(
    (c) =>
      !c.final?.chargeId ||
      owner.get(c.final.chargeId) !== c.orderNo ||
      c.final.orderNo !== c.orderNo ||
      c.final.paymentStatus !== 'PAID',
  );
  return [...new Set(bad.map((c) => c.orderNo))];
}

/** Everything known about an order: its planned fault, its rows, the bank's ledger and every caller's requests. */
export async function historyOf(
  db: pg.Pool,
  order: PlannedOrder,
  callers: Caller[],
  clearedAt: Map<string, number>,
  refundCallers: RefundCaller[] = [],
): Promise<OrderHistory> {
  const one = async (sql: string) => (await db.query(sql, [order.orderNo])).rows;
  const [row] = await one(
    `SELECT status, fence, attempt_id, claimed_at, unknown_since, charge_id, paid_at, updated_at FROM orders WHERE order_no = $1`,
  );
  const [dedupRow] = await one(
    `SELECT owner, fence, claimed_at, unknown_since, outcome FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = $1`,
  );
  const charges = await one(
    `SELECT id, created_at, idempotency_key, fence_lock FROM bank_charges WHERE merchant_ref = $1 ORDER BY created_at`,
  );
  const [outbox] = await one(`SELECT count(*)::int AS n FROM outbox WHERE key = $1 AND topic = 'payment.paid'`);
  const refundRows = await one(
    `SELECT refund_key, amount_cents, status, fence, reserved, attempt_id, bank_refund_id, updated_at FROM refunds WHERE order_no = $1`,
  );
  const bankRefunds = await one(
    `SELECT id, merchant_ref, amount_cents, created_at, idempotency_key, fence_lock FROM bank_refunds b WHERE ${REFUND_ORDER} = $1`,
  );
  const [ledger] = await one('SELECT amount_cents, refunded_cents FROM orders WHERE order_no = $1');
  const fmt = (a: Attempt) =>
    `+${(a.at / 1000).toFixed(3)} s (${a.ms} ms): ${a.status ?? a.error}${a.detail ? ` ${a.detail}` : ''}`;
  return {
    orderNo: order.orderNo,
    fault: `${order.fault} ${JSON.stringify(order.faults)}`,
    faultClearedAt: clearedAt.get(order.orderNo),
    order: row,
    dedupRow,
    charges,
    outboxEvents: (outbox as { n: number } | undefined)?.n ?? 0,
    callers: [
      ...callers
        .filter((c) => c.orderNo === order.orderNo)
        .map((c) => ({ clientId: c.clientId, key: c.key, attempts: c.attempts.map(fmt) })),
      ...refundCallers
        .filter((c) => c.orderNo === order.orderNo)
        .map((c) => ({
          clientId: c.clientId,
          key: `${c.requestId} (a refund of ${c.amountCents})`,
          attempts: c.attempts.map(fmt),
        })),
    ],
    ...(refundRows.length + bankRefunds.length > 0 ? { refunds: { rows: refundRows, bank: bankRefunds, ledger } } : {}),
  };
}
