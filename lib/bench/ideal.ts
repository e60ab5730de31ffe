import 'server-only';
// The benchmark's "ideal" guarded payment: the least Redis and PostgreSQL work a payment guarded by the
// request key, the state machine and the unique constraint needs, written by hand with ioredis and pg
// (no ORM, no timeline, no lab): 2 Redis commands and 3 SQL statements, its own two prepared (named, as the
// pipeline's are: each connection parses and plans them once), on the app's own pool, as the pipeline's are (a pool
// of its own gave it twenty connections more than the pipeline, which shares its twenty with the bank's books:
// decision 037). Its route reads the request and writes the answer as POST /api/payments does (the same checks, the
// same problems, the same response: decision 038), so that the ratio measures the guard alone.
// It is a yardstick, not a second implementation: no faults, no reconciliation.
// It charges through the same simulated bank, with the same kind of request (the bank's idempotency key
// and a fencing token): the bank's own work, which in production happens at the processor, then weighs
// the same on both sides, and the ratio measures the merchant's guard.
import { randomBytes } from 'node:crypto';
import { getPool } from '../db.ts';
import { bankKeyFor } from '../defences/bank-key/defence.ts';
import type { Answer } from '../defences/defence.ts';
import { orderLock } from '../defences/order-claim/store.ts';
import type { PaymentOutcome } from '../defences/outcome.ts';
import { chargeCard, NO_BANK_FAULTS } from '../payments/bank.ts';
import { getRedis } from '../redis.ts';

/** `name`: the request key's name in Redis (the caller's, scoped as layer 2 scopes it). */
export async function idealPayment(orderNo: string, amountCents: number, name: string): Promise<Answer> {
  const redis = getRedis();
  // 1. Claim the request key.
  if ((await redis.set(name, 'processing', 'PX', 30_000, 'NX')) === null)
    return { kind: 'in_progress', answeredBy: 'requestKey' };
  const attempt = randomBytes(8).toString('hex');
  // 2. Claim the order and insert the dedup row, in one statement (one implicit transaction).
  const claimed = await getPool().query({
    name: 'ideal_claim',
    text: `WITH claim AS (
       UPDATE orders SET status = 'PROCESSING', attempt_id = $2, claimed_at = now(), updated_at = now()
       WHERE order_no = $1 AND status = 'PENDING' AND amount_cents = $3 RETURNING order_no)
     INSERT INTO idempotent_record (biz_type, biz_no, owner) SELECT 'PAYMENT', order_no, $2 FROM claim RETURNING id`,
    values: [orderNo, attempt, amountCents],
  });
  if (claimed.rowCount !== 1) {
    await redis.del(name);
    return { kind: 'in_progress', answeredBy: 'stateMachine' };
  }
  // 3. The bank's charge.
  const { id: chargeId } = await chargeCard(
    {
      merchantRef: orderNo,
      amountCents,
      idempotencyKey: bankKeyFor(orderNo),
      fence: { lock: orderLock(orderNo), token: 1 },
    },
    NO_BANK_FAULTS,
  );
  // 4. Record the outcome: the order, the dedup row and the outbox event, in one statement.
  const outcome: PaymentOutcome = { status: 'PAID', orderNo, amountCents, chargeId, paidAt: new Date().toISOString() };
  await getPool().query({
    name: 'ideal_record',
    text: `WITH paid AS (
       UPDATE orders SET status = 'PAID', charge_id = $2, paid_at = now(), updated_at = now()
       WHERE order_no = $1 AND attempt_id = $3 AND status = 'PROCESSING' RETURNING order_no),
     dedup AS (UPDATE idempotent_record SET outcome = $4 WHERE biz_type = 'PAYMENT' AND biz_no = $1)
     INSERT INTO outbox (topic, key, payload) SELECT 'payment.paid', order_no, $4 FROM paid`,
    values: [orderNo, chargeId, attempt, JSON.stringify(outcome)],
  });
  // 5. Store the outcome for the retries.
  await redis.set(name, JSON.stringify(outcome), 'EX', 86_400);
  return { kind: 'completed', outcome };
}
