import 'server-only';
// The "send receipt" consumer: a Redis consumer group reads payment events (XREADGROUP), sends a receipt,
// and acknowledges (XACK). A consumer that dies before its ack leaves the message pending; another one
// reclaims it (XAUTOCLAIM) and it is delivered again. The dedup table (biz type RECEIPT, the order number)
// makes the second delivery send nothing. A failed receipt never touches the payment: it was final before
// the event existed (the article's third detail).
import { getDb } from '../db.ts';
import { parseOutcome } from '../defences/outcome.ts';
import { DuplicateRecordError, insertDedupRecord } from '../defences/unique-key.ts';
import { policySource } from '../payments/policy.ts';
import { getRedis } from '../redis.ts';
import { ATTR, decide, hashCaller, reason, type Span, startSpan } from '../telemetry/spans.ts';
import { ensureGroup, readDeliveries } from './consumer-group.ts';
import { EVENTS_STREAM } from './relay.ts';

export const RECEIPTS_GROUP = 'send-receipt';
/** A message pending this long belongs to a consumer presumed dead: another one takes it over. */
export const RECLAIM_IDLE_MS = 2_000;

export async function ensureReceiptsGroup(): Promise<void> {
  await ensureGroup(getRedis(), EVENTS_STREAM, RECEIPTS_GROUP);
}

export type ReceiptResult = 'sent' | 'duplicate' | 'skipped';

/**
 * Sends the receipt for one event, once per order (when layer 4 is on for the order). `owner`: the order's
 * owner, whose lab shows the delivery.
 */
export async function sendReceipt(
  fields: Record<string, string>,
  consumer: string,
): Promise<{ result: ReceiptResult; owner?: string; chargeId?: string }> {
  const outcome = parseOutcome(JSON.parse(fields.payload ?? 'null'));
  if (outcome?.status !== 'PAID') return { result: 'skipped' };
  const db = getDb();
  const order = await db.order.findUnique({ where: { orderNo: outcome.orderNo }, select: { lab: true, owner: true } });
  const owner = order?.owner ?? undefined;
  const { layers } = await policySource().forOrder({
    orderNo: outcome.orderNo,
    owner: order?.owner ?? null,
    lab: order?.lab,
  });
  try {
    await db.$transaction(async (tx) => {
      if (layers.uniqueConstraint) await insertDedupRecord(tx, 'RECEIPT', outcome.orderNo, consumer);
      await tx.receipt.create({
        data: { orderNo: outcome.orderNo, chargeId: outcome.chargeId, amountCents: outcome.amountCents, consumer },
        select: { id: true },
      });
    });
    return { result: 'sent', owner, chargeId: outcome.chargeId };
  } catch (error) {
    if (error instanceof DuplicateRecordError) return { result: 'duplicate', owner, chargeId: outcome.chargeId };
    throw error;
  }
}

/** Sends one delivery's receipt, and records what came of it on the delivery's span. */
async function deliverReceipt(
  fields: Record<string, string>,
  delivery: { id: string; consumer: string; redelivered: boolean; span: Span },
): Promise<ReceiptResult> {
  const { id, consumer, redelivered, span } = delivery;
  const { result, owner, chargeId } = await sendReceipt(fields, consumer);
  // The order's owner sees its receipts in their own lab (and the room, everyone's).
  if (owner) span.setAttribute(ATTR.owner, hashCaller(owner));
  // The charge the message is about: the payment lane whose bank step names it.
  const values = { delivery: redelivered ? 'again' : 'first', message: id, charge: chargeId ?? 'none', result };
  decide(span, 'receipt', result, () => reason('receiptDelivery', values));
  return result;
}

/**
 * One round of the consumer: first the messages other consumers left pending too long, then new ones.
 * `beforeAck` runs after a first delivery was handled and before its XACK (the lab's crash fault).
 */
export async function consumeReceipts(
  consumer: string,
  options: { blockMs?: number; beforeAck?: (orderNo: string, result: ReceiptResult) => Promise<void> } = {},
): Promise<number> {
  const redis = getRedis();
  const deliveries = await readDeliveries(redis, {
    stream: EVENTS_STREAM,
    group: RECEIPTS_GROUP,
    consumer,
    reclaimIdleMs: RECLAIM_IDLE_MS,
    blockMs: options.blockMs ?? 1_000,
  });
  for (const { id, fields, redelivered } of deliveries) {
    // One lane per message (its stream id), one step per delivery of it.
    const span = startSpan('receipt', {
      attributes: {
        [ATTR.requestId]: `rcpt-${id}`,
        [ATTR.orderNo]: fields.key ?? '',
        [ATTR.channel]: 'worker',
        [ATTR.instance]: consumer,
      },
    });
    const result = await deliverReceipt(fields, { id, consumer, redelivered, span }).finally(() => span.end());
    // After the span's end: the lab's fault may kill this consumer right after a first delivery.
    if (!redelivered) await options.beforeAck?.(fields.key ?? '', result);
    await redis.xack(EVENTS_STREAM, RECEIPTS_GROUP, id);
  }
  return deliveries.length;
}
