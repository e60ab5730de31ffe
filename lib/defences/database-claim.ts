import 'server-only';
// Layers 3 and 4 in the database: the claim an attempt takes on the order, and everything it then does with
// it. Layer 3's claim is the order's state (PENDING → PROCESSING by a conditional update, lib/defences/
// payment-state.ts); layer 4's is the payment's dedup row (a unique key, lib/defences/dedup.ts); with both
// on, one statement takes both (one round trip). Each claim raises the order's generation, its fencing token.
//
// What a duplicate stopped here gets (the statement changed no row, or the unique key refused it): the
// reconciler is asked about the order (lib/payments/reconcile.ts, passed in as `recovery`):
//   - a final outcome (recorded, or found now with the bank under a dead claim): the first outcome;
//   - a dead claim, and nothing can be charged twice (the bank never saw it, the window passed, or the bank's
//     key will return what lands): no stop, this attempt takes the claim over and pays;
//   - a charge in doubt that may still land: "in progress", answered by the reconciler;
//   - a live claim: "in progress" (once more first if the claim vanished between the statement and the read).
// When the claim is given back (every write conditional on this attempt's id and token, one statement each):
// completed with the outcome once the bank has answered (with the outbox event for the receipt); released
// when the bank refused before charging; kept UNKNOWN when the bank's answer is unknown, for the reconciler.
// A claim lost before the bank (taken over after a pause) is not this attempt's to write any more.
import { getDb, hotPath } from '../db.ts';
import { PAYMENT_PAID } from '../events/outbox.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { decide, reason } from '../telemetry/spans.ts';
import { type Attempt, type Claim, type Defence, type Hold, type OrderHold, stop } from './defence.ts';
import type { Layer, Layers } from './layers.ts';
import type { PaymentOutcome } from './outcome.ts';
import { statusesAllowing, targetOf } from './payment-transitions.ts';

/** Which of layers 3 and 4 a database claim stands for. */
export type DatabaseLayers = Pick<Layers, 'stateMachine' | 'uniqueConstraint'>;

/** The lock name the order's fencing token is checked against at the bank. */
export function orderLock(orderNo: string): string {
  return `order:${orderNo}`;
}

/**
 * One claim statement of layers 3 and 4: the claim's fencing token when this attempt took the claim; undefined
 * when no row changed (layer 3 refused: the order is not PENDING); it throws DuplicateRecordError when the
 * unique key refused the row (layer 4).
 */
export type ClaimStatement = (orderNo: string, attemptId: string, now: Date) => Promise<number | undefined>;

/** What a claim statement came to: this attempt's token, or the layer that refused it. */
async function runClaim(
  statement: ClaimStatement,
  attempt: Attempt,
): Promise<{ fence: number } | { refusedBy: Layer }> {
  try {
    const fence = await statement(attempt.orderNo, attempt.attemptId, new Date(attempt.now()));
    return fence === undefined ? { refusedBy: 'stateMachine' } : { fence };
  } catch (error) {
    // dedup.ts's DuplicateRecordError, by name: dedup.ts builds its defence from this module.
    if (error instanceof Error && error.name === 'DuplicateRecordError') return { refusedBy: 'uniqueConstraint' };
    throw error;
  }
}

/** Layers 3 and/or 4 as a defence, claiming the order with `statement`. */
export function databaseDefence(layers: DatabaseLayers & { statement: ClaimStatement; bankKey: boolean }): Defence {
  return {
    layer: layers.stateMachine ? 'stateMachine' : 'uniqueConstraint',
    async claim(attempt) {
      const { span, orderNo, attemptId } = attempt;
      for (let tries = 0; ; tries++) {
        await attempt.at?.('order.claim');
        const claimed = await runClaim(layers.statement, attempt);
        if ('fence' in claimed) {
          const { fence } = claimed;
          if (layers.stateMachine) decide(span, 'stateMachine', 'claimed', reason('dbClaimed', { fence }));
          if (layers.uniqueConstraint)
            decide(span, 'uniqueConstraint', 'inserted', reason('dedupInserted', { orderNo, fence }));
          return { kind: 'held', hold: orderHold(attempt, { orderNo, attemptId, fence }, layers, false) };
        }
        const answer = await answerDuplicate(attempt, claimed.refusedBy, layers);
        if (answer !== 'again') return answer;
        // The claim went away between this attempt's claim and its read (its holder released it): once more.
        if (tries > 0) return stillProcessing(attempt, claimed.refusedBy);
      }
    },
  };
}

/**
 * A duplicate. The first outcome if there is one; a dead claim is taken over by this request, which pays
 * once the bank has said nothing can be charged twice (reconcile.ts). `said`: the layer whose statement
 * refused it (the reasons' "0 rows", "unique violation (P2002)").
 */
async function answerDuplicate(
  attempt: Attempt,
  said: Layer,
  layers: DatabaseLayers & { bankKey: boolean },
): Promise<Claim | 'again'> {
  const { span } = attempt;
  const answer = await attempt.recovery.reconcile({ attemptId: attempt.attemptId, bankKey: layers.bankKey });
  switch (answer.kind) {
    case 'settled': {
      const found = answer.found ? 'yes' : 'no';
      decide(span, said, 'stopped', reason('dbSettled', { layer: said, found, status: answer.outcome.status }));
      // Found by the reconciler: the dead claim's own charge, answered as its replay. Else the order was
      // already settled, by another intent as far as this request can tell.
      const answeredBy = answer.found ? 'reconciler' : said;
      return stop({ kind: 'duplicate', outcome: answer.outcome, answeredBy, existing: !answer.found });
    }
    case 'resumed':
      decide(span, said, 'takeover', reason('dbTakeover', { layer: said, fence: answer.hold.fence }));
      return { kind: 'held', hold: orderHold(attempt, answer.hold, layers, true) };
    case 'waiting':
      decide(span, said, 'stopped', reason('dbConfirming', { layer: said }));
      return stop({ kind: 'in_progress', answeredBy: 'reconciler' });
    case 'gone':
      return stop({ kind: 'order_not_found' });
    case 'idle':
    case 'released':
      return 'again';
    case 'running':
      return stillProcessing(attempt, said);
  }
}

function stillProcessing(attempt: Attempt, said: Layer): Claim {
  decide(attempt.span, said, 'stopped', reason('dbStillProcessing', { layer: said }));
  return stop({ kind: 'in_progress', answeredBy: said });
}

/** The order this attempt holds in the database, and how each end of the attempt reaches it. */
function orderHold(attempt: Attempt, hold: OrderHold, layers: DatabaseLayers, tookOver: boolean): Hold {
  const { span, orderNo } = attempt;
  const layer: Layer = layers.stateMachine ? 'stateMachine' : 'uniqueConstraint';
  return {
    fence: { fence: { lock: orderLock(orderNo), token: hold.fence }, byLock: false, layer },
    tookOver,
    async renew(now) {
      await attempt.at?.('order.renew');
      if (await renewClaim(hold, layers, new Date(now))) return undefined;
      decide(span, layer, 'lost', reason('claimLost'));
      return { kind: 'in_progress', answeredBy: layer };
    },
    // Before the bank only a lost claim stops this attempt after the database: it is another's now.
    stopped: async (answer) => answer,
    async settle(verdict) {
      switch (verdict.kind) {
        case 'settled':
          // A failure here happens after the money moved: the reconciler settles the order from the bank.
          await attempt.at?.('order.record');
          await recordOutcome(verdict.outcome, hold, layers).then(
            (recorded) => {
              if (!recorded) decide(span, 'outcome', 'late', reason('outcomeLate'));
            },
            (error: Error) =>
              console.error(`[pay] ${orderNo}: outcome not recorded (${error.message}); reconciliation will`),
          );
          return;
        case 'nothingMoved':
          await attempt.at?.('order.release');
          await releaseClaim(hold).catch((error: Error) =>
            console.error(`[pay] ${orderNo}: claim not released (${error.message})`),
          );
          return;
        case 'unknown':
          await attempt.at?.('order.keepUnknown');
          await keepClaimUnknown(hold, new Date(verdict.since)).catch(() => {});
          return;
      }
    },
  };
}

/**
 * Layers 3 and 4 both off: nothing guards the order. It is still written when the bank answers, unguarded:
 * the last request to finish writes its outcome over the first one's (the card statement, not this row,
 * shows how many charges there were).
 */
export const unguardedOrder: Defence = {
  name: 'order',
  async claim(attempt) {
    const { orderNo } = attempt;
    return {
      kind: 'held',
      hold: {
        tookOver: false,
        renew: async () => undefined,
        stopped: async (answer) => answer,
        async settle(verdict) {
          if (verdict.kind !== 'settled') return;
          await attempt.at?.('order.record');
          await recordUnguarded(verdict.outcome).catch((error: Error) =>
            console.error(`[pay] ${orderNo}: outcome not recorded (${error.message}); reconciliation will`),
          );
        },
      },
    };
  },
};

/** An outcome written over the order with no claim to check (layers 3 and 4 off). */
export async function recordUnguarded(outcome: PaymentOutcome): Promise<void> {
  await recordOutcome(outcome, undefined, { stateMachine: false, uniqueConstraint: false });
}

/** Renews the attempt's claims (after a long pause, before the bank); false when it lost one of them. */
async function renewClaim(hold: OrderHold, layers: DatabaseLayers, now: Date): Promise<boolean> {
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
async function releaseClaim(hold: OrderHold): Promise<void> {
  await getDb().$executeRaw`
    WITH o AS (
      UPDATE orders SET status = ${targetOf('failedBeforeCharge')}::payment_status, attempt_id = NULL, claimed_at = NULL,
        updated_at = now()
      WHERE order_no = ${hold.orderNo} AND attempt_id = ${hold.attemptId} AND fence = ${hold.fence}
        AND status = ANY(${statusesAllowing('failedBeforeCharge')}::payment_status[])
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
async function keepClaimUnknown(hold: OrderHold, now: Date): Promise<void> {
  await getDb().$executeRaw`
    WITH o AS (
      UPDATE orders SET status = ${targetOf('timedOut')}::payment_status, attempt_id = NULL, unknown_since = ${now},
        updated_at = now()
      WHERE order_no = ${hold.orderNo} AND attempt_id = ${hold.attemptId} AND fence = ${hold.fence}
        AND status = ANY(${statusesAllowing('timedOut')}::payment_status[])
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
async function recordOutcome(
  outcome: PaymentOutcome,
  hold: OrderHold | undefined,
  layers: DatabaseLayers,
): Promise<boolean> {
  const { orderNo } = outcome;
  const chargeId = outcome.status === 'PAID' ? outcome.chargeId : null;
  const event = outcome.status === 'PAID' ? 'charged' : 'declined';
  const json = JSON.stringify(outcome);
  const result =
    outcome.status === 'PAID'
      ? Prisma.sql`charge_id = ${outcome.chargeId}, paid_at = ${new Date(outcome.paidAt)}`
      : Prisma.sql`decline_reason = ${outcome.reason}`;
  const claimed = (holder: Prisma.Sql) =>
    hold ? Prisma.sql`AND ${holder} = ${hold.attemptId} AND fence = ${hold.fence}` : Prisma.sql`AND FALSE`;
  // Layer 3 guards the order with the claim. Without it the write is unguarded, but a decline never lands on
  // a charge: a stale attempt's DECLINED must not overwrite another attempt's PAID.
  const guard = layers.stateMachine
    ? Prisma.sql`${claimed(Prisma.sql`attempt_id`)} AND status = ANY(${statusesAllowing(event)}::payment_status[])`
    : outcome.status === 'DECLINED'
      ? Prisma.sql`AND status <> 'PAID'`
      : Prisma.empty;
  const dedup = layers.uniqueConstraint
    ? Prisma.sql`UPDATE idempotent_record SET outcome = ${json}::jsonb
        WHERE biz_type = 'PAYMENT' AND biz_no = ${orderNo} AND outcome IS NULL ${claimed(Prisma.sql`owner`)}
        RETURNING 1`
    : Prisma.sql`SELECT 1 WHERE FALSE`;
  const [recorded] = await hotPath().$queryRaw<Array<{ order: number; row: number }>>`
    WITH moved AS (
      UPDATE orders SET status = ${targetOf(event)}::payment_status, ${result}, attempt_id = NULL, claimed_at = NULL,
        unknown_since = NULL, updated_at = now()
      WHERE order_no = ${orderNo} ${guard}
      RETURNING order_no),
    dedup AS (${dedup}),
    event AS (
      INSERT INTO outbox (topic, key, payload, charge_id)
      SELECT ${PAYMENT_PAID}, order_no, ${json}::jsonb, ${chargeId} FROM moved WHERE ${outcome.status === 'PAID'}
      ON CONFLICT (topic, charge_id) DO NOTHING)
    SELECT (SELECT count(*) FROM moved)::int AS "order", (SELECT count(*) FROM dedup)::int AS "row"`;
  return (!layers.stateMachine || recorded?.order === 1) && (!layers.uniqueConstraint || recorded?.row === 1);
}
