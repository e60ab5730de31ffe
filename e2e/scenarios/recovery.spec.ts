// The recovery path: a claim that dies (an attempt that stalls past its lease, to everyone else dead) and
// a bank that charges after the merchant gave up. Service calls, as a client library would make them.
import type { APIRequestContext } from '@playwright/test';
import { type Answer, categorizeAnswer, payOnce, retryUntilFinal, scenario } from './cell';
import type { Sees } from './matrix';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The moment the duplicates come: past the first attempt's 1 s lease, while it is still paused (2.5 s). */
const AFTER_THE_LEASE_MS = 1_300;

scenario('stall-takeover', async ({ request, orderNo }) => {
  const client = { key: `stall-${orderNo}`, client: 'shop-backend' };
  const first = payOnce(request, orderNo, client);
  await sleep(AFTER_THE_LEASE_MS);
  // The client's retry of the same payment (its first request looks stuck).
  await payOnce(request, orderNo, client);
  await first;
  // Both answered; what does the client learn when it asks once more?
  return categorizeAnswer(await payOnce(request, orderNo, client));
});

scenario('dead-claim', async ({ request, orderNo }) => {
  const first = payOnce(request, orderNo, { key: `dead-${orderNo}`, client: 'shop-backend' });
  await sleep(AFTER_THE_LEASE_MS);
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
