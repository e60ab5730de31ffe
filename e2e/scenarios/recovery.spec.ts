// The recovery path: a claim that dies (an attempt that stalls past its lease, to everyone else dead) and
// a bank that charges after the merchant gave up. Service calls, as a client library would make them.
import type { APIRequestContext } from '@playwright/test';
import { decodeRecord, requestKeyName } from '../../lib/defences/request-key/record';
import { clientScope } from '../../lib/session';
import { type Answer, type CellContext, categorizeAnswer, payOnce, retryUntilFinal, scenario, testRedis } from './cell';
import { SCENARIOS, type Sees } from './matrix';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the first attempt's claims are abandoned: each past its lease, judged from when it was taken by the
 * app's clock, as the app judges it (its key in Redis, its order's claim and dedup row in PostgreSQL), while the first
 * attempt still pauses. A fixed pause from the first request's sending cannot promise it: on a machine running a
 * second suite, the first attempt claimed the order 300 ms or more after its key, the duplicates came between the two
 * leases' ends, and the row played another story (the key taken over, the order still held: "in progress"). Waits
 * no longer than the pause itself (by then the first has woken anyway), and with no claim to wait for (layers 2-4
 * off) a lease and a bit.
 */
async function untilAbandoned(id: string, { db, orderNo, layers }: CellContext, key: string): Promise<void> {
  const lab = SCENARIOS.find((declared) => declared.id === id)?.lab;
  const leaseMs = lab?.claims?.leaseMs ?? 0;
  const deadline = Date.now() + (lab?.faults?.stallBeforeBankMs ?? 0);
  const keyName = requestKeyName(clientScope('shop-backend'), key);
  const takenAt = async (): Promise<Array<number | undefined>> => {
    const times: Array<number | undefined> = [];
    if (layers.requestKey) {
      const raw = await testRedis().get(keyName);
      const record = raw === null ? undefined : decodeRecord(raw);
      times.push(record?.state === 'processing' ? record.since : undefined);
    }
    if (layers.stateMachine || layers.uniqueConstraint) {
      const { rows } = await db.query<{ order_claim: Date | null; row_claim: Date | null }>(
        `SELECT (SELECT claimed_at FROM orders WHERE order_no = $1 AND status = 'PROCESSING') AS order_claim,
           (SELECT claimed_at FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = $1 AND outcome IS NULL)
             AS row_claim`,
        [orderNo],
      );
      if (layers.stateMachine) times.push(rows[0]?.order_claim?.getTime());
      if (layers.uniqueConstraint) times.push(rows[0]?.row_claim?.getTime());
    }
    return times;
  };
  const noClaim = !layers.requestKey && !layers.stateMachine && !layers.uniqueConstraint;
  if (noClaim) {
    await sleep(leaseMs + 300);
    return;
  }
  // 50 ms past the lease: its end is judged in whole milliseconds, on either side of a round trip.
  const abandoned = (times: Array<number | undefined>) =>
    times.every((at) => at !== undefined && Date.now() > at + leaseMs + 50);
  while (Date.now() < deadline && !abandoned(await takenAt())) await sleep(25);
}

scenario('stall-takeover', async (cell) => {
  const { request, orderNo } = cell;
  const client = { key: `stall-${orderNo}`, client: 'shop-backend' };
  const first = payOnce(request, orderNo, client);
  await untilAbandoned('stall-takeover', cell, client.key);
  // The client's retry of the same payment (its first request looks stuck).
  await payOnce(request, orderNo, client);
  await first;
  // Both answered; what does the client learn when it asks once more?
  return categorizeAnswer(await payOnce(request, orderNo, client));
});

scenario('dead-claim', async (cell) => {
  const { request, orderNo } = cell;
  const first = payOnce(request, orderNo, { key: `dead-${orderNo}`, client: 'shop-backend' });
  await untilAbandoned('dead-claim', cell, `dead-${orderNo}`);
  const payers = [1, 2].map((n) => ({ key: `dead-${n}-${orderNo}`, client: `payer-${n}` }));
  const answers: Answer[] = await Promise.all(payers.map((payer) => payOnce(request, orderNo, payer)));
  await first;
  // A payer told "in progress" asks again once everything has answered.
  const final = await Promise.all(
    payers.map(async (payer, i) => {
      const answer = answers[i];
      return answer && answer.status !== 409 ? answer : payOnce(request, orderNo, payer);
    }),
  );
  return loserSees(final.map(categorizeAnswer));
});

scenario('late-charge', async ({ request, orderNo }) => payUntilAnswered(request, orderNo, `late-${orderNo}`));

/** What the payer who did not charge was told (all charged: "paid"). */
function loserSees(seen: Sees[]): Sees {
  return seen.find((sees) => sees !== 'paid') ?? 'paid';
}

/** A well-behaved client: one key; on 409 it waits as Retry-After says and asks again. */
function payUntilAnswered(request: APIRequestContext, orderNo: string, key: string): Promise<Sees> {
  return retryUntilFinal(request, orderNo, { key, client: 'shop-backend' }).then(categorizeAnswer);
}
