// The recovery path on the running app, as issue 10's acceptance states it: an attempt that stalls past its
// lease while 20 payers come, 20 times over, under layer 3 alone, layer 4 alone and layer 2 alone (its own
// retries); and a bank that charges after the merchant gave up, seen from the checkout page.
import { onlyLayers } from '../lib/lab/settings';
import { ALL_ON, CheckoutPage, chargeCount, createOrder, expect, test } from './fixtures';
import { payOnce, retryUntilFinal } from './scenarios/cell';
import { DEEP_TAG } from './tiers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const REPETITIONS = 20;
const PAYERS = 20;
/**
 * Repetitions played at once. All twenty at once, in each of the three cases at once, put some 1,300 requests on
 * one app: on a machine busy with another suite, a request then waited more than 30 s for the CPU. Each
 * repetition keeps its 21 requests at once.
 */
const AT_ONCE = 5;

const CASES = [
  { name: 'layer 3 alone, 20 payers each with its own key', layers: onlyLayers('stateMachine'), sameKey: false },
  { name: 'layer 4 alone, 20 payers each with its own key', layers: onlyLayers('uniqueConstraint'), sameKey: false },
  { name: 'layer 2 alone, 20 retries with the same key', layers: onlyLayers('requestKey'), sameKey: true },
];

test.describe('a payment stalls past its lease (1 s) for 2.5 s; after 1.3 s, 20 payers come at once', () => {
  // One case after another, in one worker: each is a storm of its own.
  test.describe.configure({ mode: 'default' });
  for (const { name, layers, sameKey } of CASES) {
    // Each storm puts one layer alone to a storm of its own: `npm run test:deep` runs them (e2e/tiers.ts).
    test(`${name}: exactly one charge, ${REPETITIONS} times out of ${REPETITIONS}`, { tag: DEEP_TAG }, async ({
      request,
    }) => {
      test.setTimeout(180_000);
      const orders = await Promise.all(
        Array.from({ length: REPETITIONS }, () =>
          createOrder(request, { layers, faults: { stallBeforeBankMs: 2_500 }, claims: { leaseMs: 1_000 } }),
        ),
      );
      // Every payer is a well-behaved client: told "in progress" (409), it retries with its key after
      // Retry-After. Who pays depends on timing (a payer, or, on a loaded machine where the payers come late,
      // the background reconciler gives the dead claim back and a retry pays); that one pays does not.
      const repetition = async (orderNo: string) => {
        const client = 'acceptance';
        const first = retryUntilFinal(request, orderNo, { key: `first-${orderNo}`, client });
        await sleep(1_300);
        const payers = await Promise.all(
          Array.from({ length: PAYERS }, (_, i) =>
            retryUntilFinal(request, orderNo, {
              key: sameKey ? `first-${orderNo}` : `payer-${i}-${orderNo}`,
              client,
            }),
          ),
        );
        return [await first, ...payers];
      };
      const answers = [];
      for (let wave = 0; wave < orders.length; wave += AT_ONCE) {
        answers.push(...(await Promise.all(orders.slice(wave, wave + AT_ONCE).map(repetition))));
      }
      const counts = await Promise.all(orders.map(chargeCount));
      expect(counts).toEqual(orders.map(() => 1));
      // And every one of them ended with the payment (201, 201 replayed, or 200: the existing payment).
      const statuses = new Set(answers.flat().map((answer) => answer.status));
      expect(
        [...statuses].every((status) => status === 200 || status === 201),
        [...statuses].join(', '),
      ).toBe(true);
    });
  }

  test('with every defence off, the stalled payment and its duplicates each charge', async ({ request }) => {
    const orderNo = await createOrder(request, {
      layers: onlyLayers(),
      faults: { stallBeforeBankMs: 2_500 },
      claims: { leaseMs: 1_000 },
    });
    const first = payOnce(request, orderNo, { key: 'first', client: 'acceptance-off' });
    await sleep(1_300);
    await Promise.all([1, 2].map((i) => payOnce(request, orderNo, { key: `payer-${i}`, client: 'acceptance-off' })));
    await first;
    expect(await chargeCount(orderNo)).toBe(3);
  });
});

test('the bank charges 1.5 s after the merchant gave up: with every defence on, the customer ends with PAID and one charge', async ({
  page,
  request,
}) => {
  const orderNo = await createOrder(request, { layers: ALL_ON, faults: { bankLateChargeMs: 1_500 } });
  const checkout = await new CheckoutPage(page).open(orderNo);
  await checkout.payButton.click();
  await expect(checkout.outcome).toContainText('Payment in progress');
  // Nobody retries: the reconciler asks the bank until the late charge has landed, and records it.
  await expect(checkout.status).toHaveText('PAID', { timeout: 25_000 });
  await expect(checkout.chargeCount).toHaveText('Charged once.');
  // The answer "in progress" turns into the outcome once the order has one.
  await expect(checkout.outcome).toContainText('Payment successful');
  await expect(checkout.outcome).toHaveAttribute('data-answer', 'in_progress');
  expect(await chargeCount(orderNo)).toBe(1);
});
