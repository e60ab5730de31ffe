import 'server-only';
// The refund worker: a back office that refunds in batches sends each refund as a message on a Redis stream
// (XADD), its request id in it, made and kept before sending; a consumer group reads them (XREADGROUP), runs the
// refund pipeline and acknowledges (XACK). A consumer that dies before its ack leaves the message pending; another
// takes it over (XAUTOCLAIM) and it is delivered again: at-least-once. The redelivery carries the same request id,
// so the refund's defences answer it with the first outcome: no second refund. An answer that says "not now" is not
// acknowledged either: the message stays pending and is delivered again, as a client retries a 409 or a 503.
import { z } from 'zod';
import { ensureGroup, readDeliveries } from '../events/consumer-group.ts';
import { getRedis } from '../redis.ts';
import type { CallerScope } from '../session.ts';
import { defaultRefundOptions, type RefundResult, refund } from './refund.ts';

export const REFUNDS_STREAM = 'refunds:requests';
export const REFUNDS_GROUP = 'refund-worker';
/** A message pending this long belongs to a consumer presumed dead: another one takes it over. */
export const REFUND_RECLAIM_IDLE_MS = 2_000;

/** A refund as a message carries it: the back office's request id, the order, the amount, the caller. */
const MessageSchema = z.object({
  requestId: z.string().min(1).max(255),
  orderNo: z.string().min(1).max(64),
  amountCents: z.coerce.number().int().positive().max(100_000_000),
  caller: z.string().regex(/^[cs]\.[A-Za-z0-9._-]{1,100}$/),
});
export type RefundMessage = { requestId: string; orderNo: string; amountCents: number; caller: CallerScope };

/** Sends a refund to the worker. The request id must already be kept by the sender (it is the refund's identity). */
export async function enqueueRefund(message: RefundMessage): Promise<string> {
  const { requestId, orderNo, amountCents, caller } = message;
  const id = await getRedis().xadd(
    REFUNDS_STREAM,
    '*',
    'requestId',
    requestId,
    'orderNo',
    orderNo,
    'amountCents',
    String(amountCents),
    'caller',
    caller,
  );
  if (!id) throw new Error('the refund was not queued');
  return id;
}

export async function ensureRefundsGroup(): Promise<void> {
  await ensureGroup(getRedis(), REFUNDS_STREAM, REFUNDS_GROUP);
}

/**
 * One delivery of a message, and what the pipeline answered it (a malformed message is acknowledged and dropped).
 * `later`: the answer was "not now", and the message is left pending, to be delivered again.
 */
export type RefundDelivery = { id: string; redelivered: boolean; result?: RefundResult; later: boolean };

/**
 * The answers that say "not now": the refund's claim is another delivery's (its lease not yet run out), the bank
 * failed before refunding (nothing moved), the order's payment is under way or in doubt. Acknowledged, the refund
 * the back office asked for would never be made; left pending, the message is taken over (by this consumer or
 * another) once it has been pending REFUND_RECLAIM_IDLE_MS, and delivered again with the same request id. Every
 * other answer is final: the refund made or refused, its first outcome, an order that cannot be refunded.
 */
const NOT_NOW: ReadonlySet<RefundResult['kind']> = new Set(['in_progress', 'failed_retryable', 'payment_in_progress']);

/**
 * One round of the consumer: first the messages other consumers left pending too long, then new ones. `beforeAck`
 * runs after a delivery was handled and before its XACK (a test's, or the lab's, crash).
 */
export async function consumeRefunds(
  consumer: string,
  options: {
    blockMs?: number;
    /** How long a message must have been pending before it is taken over (REFUND_RECLAIM_IDLE_MS). */
    reclaimIdleMs?: number;
    /**
     * The connection its blocking read waits on: a worker gives it one of its own, so that the wait holds up nothing
     * else (the receipts' consumer, the outbox relay) on the process's shared connection.
     */
    redis?: ReturnType<typeof getRedis>;
    beforeAck?: (delivery: RefundDelivery) => Promise<void>;
  } = {},
): Promise<RefundDelivery[]> {
  const redis = options.redis ?? getRedis();
  const deliveries = await readDeliveries(redis, {
    stream: REFUNDS_STREAM,
    group: REFUNDS_GROUP,
    consumer,
    reclaimIdleMs: options.reclaimIdleMs ?? REFUND_RECLAIM_IDLE_MS,
    blockMs: options.blockMs ?? 1_000,
  });
  const done: RefundDelivery[] = [];
  for (const { id, fields, redelivered } of deliveries) {
    const result = await deliver(id, fields);
    const delivery: RefundDelivery = {
      id,
      redelivered,
      result,
      later: result !== undefined && NOT_NOW.has(result.kind),
    };
    await options.beforeAck?.(delivery);
    if (delivery.later) {
      if (!redelivered) console.log(`[refunds] message ${id}: ${result?.kind}, delivered again later`);
    } else {
      await redis.xack(REFUNDS_STREAM, REFUNDS_GROUP, id);
    }
    done.push(delivery);
  }
  return done;
}

/** A message's refund: the pipeline, with the message's fields as its parameters (a redelivery's are the same). */
async function deliver(id: string, fields: Record<string, string>): Promise<RefundResult | undefined> {
  const parsed = MessageSchema.safeParse(fields);
  if (!parsed.success) {
    console.error(`[refunds] message ${id} is malformed: dropped`);
    return undefined;
  }
  const { requestId, orderNo, amountCents, caller } = parsed.data;
  return refund(
    {
      orderNo,
      amountCents,
      caller: caller as CallerScope,
      channel: 'queue',
      requestId,
      params: { requestId, orderNo, amountCents },
      laneId: `refund-${id}`,
    },
    defaultRefundOptions(),
  );
}
