import 'server-only';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { getDb } from '../db.ts';
import { outcomeFromOrder, type PaymentOutcome } from '../defences/outcome.ts';
import {
  claimRequestKey,
  completeRequestKey,
  releaseRequestKey,
  takeOverRequestKey,
} from '../defences/request-key/store.ts';
import { env } from '../env.ts';
import type { PaymentStatus, Prisma } from '../generated/prisma/client.ts';
import { newAttemptId } from '../instance.ts';
import type { CallerScope } from '../session.ts';
import { type Charge, listCharges } from './bank.ts';
import { type BankRefund, refundsOfOrder } from './bank-refunds.ts';
import { rememberOrderFacts } from './order-facts.ts';
import { newOrderNo } from './order-no.ts';

export const DEFAULT_AMOUNT_CENTS = 4_200;

export type OrderSummary = { orderNo: string; amountCents: number; status: PaymentStatus; checkoutUrl: string };

/** An order as POST /api/orders answers it: its fields always in this order, so a replay is the same bytes. */
export const OrderSummarySchema = z.object({
  orderNo: z.string(),
  amountCents: z.number().int(),
  status: z.enum(['PENDING', 'PROCESSING', 'PAID', 'DECLINED', 'UNKNOWN']),
  checkoutUrl: z.string(),
});

/**
 * Who may read and pay an order: the caller that created it, and the sessions that opened its checkout link
 * (its join code: "pay on another device"). An order created by a caller that did not name itself is open to
 * anyone (the guide's curl lines and the scenarios on loopback; refused when the app is exposed).
 */
export type OrderAccess = { owner: string | null; payers: string[] };

export function mayUse(order: OrderAccess, caller: CallerScope | undefined): boolean {
  if (order.owner === null) return true;
  return caller !== undefined && (order.owner === caller || order.payers.includes(caller));
}

/** How many other sessions one order's link may let in: a leaked link cannot grow the row without bound. */
const MAX_PAYERS = 20;
export type OrderView = Omit<OrderSummary, 'checkoutUrl'> & {
  charges: Charge[];
  /** The card network's refunds of its charges: what the customer got back. */
  refunds: BankRefund[];
  /** The merchant's ledger: refunds made, under way or in doubt (never more than the amount). */
  refundedCents: number;
};

/**
 * `lab`: settings of its own, as the lab validated them (the policy source reads them back, lib/lab/policy.ts);
 * kept with the order as given.
 */
export type NewOrder = { amountCents?: number; lab?: Prisma.InputJsonObject };

export async function createOrder(input: NewOrder, owner?: CallerScope): Promise<OrderSummary> {
  const joinCode = owner ? randomBytes(16).toString('base64url') : null;
  const settingsOfItsOwn = Boolean(input.lab);
  const order = await getDb().order.create({
    data: {
      // Its number says whether it has settings of its own (order-no.ts).
      orderNo: newOrderNo(settingsOfItsOwn),
      amountCents: input.amountCents ?? DEFAULT_AMOUNT_CENTS,
      ...(input.lab ? { lab: input.lab } : {}),
      owner: owner ?? null,
      joinCode,
    },
    select: { orderNo: true, amountCents: true, status: true },
  });
  // Its facts for its payments, unless it has settings of its own: those are read from the row (order-facts.ts).
  if (!settingsOfItsOwn) rememberOrderFacts(order.orderNo, { amountCents: order.amountCents, owner: owner ?? null });
  // The link that lets another session of the customer pay it too (the owner gives it out).
  const checkoutUrl = `/checkout/${order.orderNo}${joinCode ? `?join=${joinCode}` : ''}`;
  return { ...order, checkoutUrl };
}

/** The order with what the card network recorded for it, or null when there is none this caller may see. */
export async function findOrderView(orderNo: string, caller: CallerScope | undefined): Promise<OrderView | null> {
  const [order, charges, refunds] = await Promise.all([
    getDb().order.findUnique({
      where: { orderNo },
      select: { orderNo: true, amountCents: true, status: true, owner: true, payers: true, refundedCents: true },
    }),
    listCharges(orderNo),
    refundsOfOrder(orderNo),
  ]);
  if (!order || !mayUse(order, caller)) return null;
  const { owner: _owner, payers: _payers, ...view } = order;
  return { ...view, charges, refunds };
}

/** Whether the order exists and this caller may use it (anything else is a 404: not found, or not yours). */
export async function orderUsableBy(orderNo: string, caller: CallerScope | undefined): Promise<boolean> {
  const order = await getDb().order.findUnique({ where: { orderNo }, select: { owner: true, payers: true } });
  return order !== null && mayUse(order, caller);
}

/** The order's checkout link with its join code, for its owner to give to another device; null for others. */
export async function joinLinkFor(orderNo: string, caller: CallerScope | undefined): Promise<string | null> {
  if (!caller) return null;
  const order = await getDb().order.findUnique({ where: { orderNo }, select: { owner: true, joinCode: true } });
  return order?.owner === caller && order.joinCode ? `/checkout/${orderNo}?join=${order.joinCode}` : null;
}

/**
 * Lets a session in through the order's checkout link: true when it may use the order now. The code is
 * compared in the statement itself, and the list of payers is bounded.
 */
export async function joinOrder(orderNo: string, joinCode: string, caller: CallerScope): Promise<boolean> {
  await getDb().$executeRaw`
    UPDATE orders SET payers = array_append(payers, ${caller}::varchar)
    WHERE order_no = ${orderNo} AND join_code = ${joinCode} AND owner IS DISTINCT FROM ${caller}
      AND NOT (${caller}::varchar = ANY (payers)) AND cardinality(payers) < ${MAX_PAYERS}`;
  return orderUsableBy(orderNo, caller);
}

/** The order's final outcome, if it has one (what a customer told "already submitted" wants to know). */
export async function findOrderOutcome(orderNo: string): Promise<PaymentOutcome | undefined> {
  const order = await getDb().order.findUnique({
    where: { orderNo },
    select: { orderNo: true, amountCents: true, status: true, chargeId: true, paidAt: true, declineReason: true },
  });
  return order ? outcomeFromOrder(order) : undefined;
}

/** The endpoint an order's Idempotency-Key is bound to: the same key on another endpoint is refused. */
export const ORDERS_ENDPOINT = 'POST /api/orders';

/**
 * How long an order's creation is replayed under its key: an hour (or the payments' TTL, if shorter). A retry
 * of a creation comes within seconds; a key kept a day for every unpaid order let anyone fill Redis with them
 * for free (issue 28: about 960 bytes each). A payment's outcome is kept REQUEST_KEY_RESULT_TTL_SECONDS.
 */
export const ORDER_KEY_TTL_SECONDS = 3_600;

export type CreatedOnce =
  | { kind: 'created' | 'replayed'; order: OrderSummary }
  | { kind: 'in_progress' }
  | { kind: 'mismatch'; usedOn?: string };

/**
 * Creates an order at most once per Idempotency-Key (layer 2's claim, bound to this endpoint): a retry gets
 * the first order back, a concurrent one "in progress", the key with another body a mismatch. A creator that
 * died between its insert and storing the order under the key leaves one PENDING order nobody references
 * (no money moves on creation): after the lease, the retry creates another.
 */
export async function createOrderOnce(
  input: NewOrder,
  key: { name: string; fingerprint: string },
  creator?: CallerScope,
): Promise<CreatedOnce> {
  const owner = newAttemptId();
  const context = {
    now: Date.now(),
    leaseMs: env().REQUEST_KEY_LEASE_MS,
    ttlSeconds: Math.min(ORDER_KEY_TTL_SECONDS, env().REQUEST_KEY_RESULT_TTL_SECONDS),
  };
  const claim = { owner, fingerprint: key.fingerprint, endpoint: ORDERS_ENDPOINT };
  const decision = await claimRequestKey(key.name, claim, context);
  switch (decision.kind) {
    case 'replay': {
      const order = OrderSummarySchema.safeParse(decision.outcome);
      return order.success ? { kind: 'replayed', order: order.data } : { kind: 'in_progress' };
    }
    case 'in_progress':
      return { kind: 'in_progress' };
    case 'mismatch':
      return { kind: 'mismatch', usedOn: decision.usedOn };
    case 'abandoned':
      if ((await takeOverRequestKey(key.name, decision.claim, claim, context)) === undefined) {
        return { kind: 'in_progress' };
      }
      break;
    case 'claimed':
      break;
  }
  let order: OrderSummary;
  try {
    order = OrderSummarySchema.parse(await createOrder(input, creator));
  } catch (error) {
    await releaseRequestKey(key.name, owner).catch(() => false);
    throw error;
  }
  const done = { fingerprint: key.fingerprint, endpoint: ORDERS_ENDPOINT, outcome: order, existing: false };
  await completeRequestKey(key.name, owner, done, context.ttlSeconds);
  return { kind: 'created', order };
}
