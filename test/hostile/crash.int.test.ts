// Hostile test 6, the crash: the app process is killed (SIGKILL) after the bank charged the card and before
// it answered, then started again under the same INSTANCE_NAME. At start-up it finds the claims its previous
// life left behind (attempt ids carry the instance name and a boot id), asks the bank, and records the
// charge it finds: the order is PAID with no manual step, and the customer's retry is answered with that
// one charge. The request key alone survives it too (its retry takes the dead claim over and asks the bank
// under the key's fencing token); with every defence off, the retry charges again.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_OFF,
  ALL_ON,
  type Answer,
  type App,
  chargesOf,
  createOrder,
  hostilePort,
  type Layers,
  labFor,
  ownDatabase,
  payByApi,
  send,
  startTestApp,
  until,
} from './harness.ts';

const PORT = hostilePort(3130);
const INSTANCE = 'hostile-crash';
// The bank records the charge first and answers this much later: the window in which the process dies.
// Long, so that the kill always lands inside it; the orders are given a fast bank again after the restart.
const BANK_LATENCY_MS = 8_000;
const REQUEST_KEY_ONLY: Layers = { ...ALL_ON, stateMachine: false, uniqueConstraint: false, bankKey: false };

let databaseUrl = '';
let app: App | undefined;
const payments = {
  defended: { layers: ALL_ON, orderNo: '', key: '' },
  requestKeyOnly: { layers: REQUEST_KEY_ONLY, orderNo: '', key: '' },
  undefended: { layers: ALL_OFF, orderNo: '', key: '' },
};

const running = (): App => {
  if (!app) throw new Error('the app is not running');
  return app;
};

beforeAll(async () => {
  databaseUrl = await ownDatabase('payonce_hostile_crash');
  const start = () =>
    startTestApp({ port: PORT, databaseUrl, redisUrl: process.env.REDIS_URL ?? '', instanceName: INSTANCE });
  app = await start();
  for (const payment of Object.values(payments)) {
    payment.orderNo = await createOrder(app, { lab: labFor(payment.layers, BANK_LATENCY_MS) });
    payment.key = `crash-${payment.orderNo}`;
  }
  // Both payments in flight at once; one crash takes both down.
  const inFlight = Object.values(payments).map((payment) =>
    payByApi(running(), payment.orderNo, payment.key).then(
      (answer) => answer.status,
      (error: Error) => error,
    ),
  );
  await until('the bank to charge both cards', async () => {
    for (const { orderNo } of Object.values(payments)) {
      if ((await chargesOf(databaseUrl, orderNo)).length === 0) return undefined;
    }
    return true;
  });
  await app.kill();
  // Neither customer got an answer: the connection died with the process.
  for (const answer of await Promise.all(inFlight)) expect(answer).toBeInstanceOf(Error);

  // The bank has recovered by the time the customers retry.
  await setBankLatency(
    Object.values(payments).map((payment) => payment.orderNo),
    0,
  );
  app = await start();
});

afterAll(async () => {
  await app?.stop();
});

async function setBankLatency(orderNos: string[], ms: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `UPDATE orders SET lab = jsonb_set(lab, '{faults,bankLatencyMs}', to_jsonb($2::int)) WHERE order_no = ANY($1)`,
      [orderNos, ms],
    );
  } finally {
    await client.end();
  }
}

/** The customer's client retries with its key for as long as it is told "in progress, retry shortly". */
async function retryUntilAnswered(orderNo: string, key: string): Promise<Answer> {
  return until(`an answer other than 409 for ${orderNo}`, async () => {
    const answer = await payByApi(running(), orderNo, key);
    return answer.status === 409 ? undefined : answer;
  });
}

describe('the app is killed while the bank holds a payment, and restarted', () => {
  it('all layers on: settled PAID at start-up with no manual step; the retry gets that one charge', async () => {
    const { orderNo, key } = payments.defended;
    const [charge, ...more] = await chargesOf(databaseUrl, orderNo);
    expect(more).toEqual([]);

    // Nobody retried yet: the restarted app asked the bank and recorded the charge it found.
    const order = await until('the order to be settled', async () => {
      const view = (await fetchOrder(orderNo)) as { status: string; charges: Array<{ id: string }> };
      return view.status === 'PAID' ? view : undefined;
    });
    expect(order.charges.map((c) => c.id)).toEqual([charge?.id]);
    // Settled by the start-up sweep (the claim was this instance's previous life's), not by a lease running out.
    // The sweep says so once its round is over (after the refunds' claims) and the line crosses a pipe, so the
    // order can be PAID a moment before it: wait for the line. A round that was not the start-up one never
    // prints it.
    await until('the start-up sweep to report it', async () =>
      /\[reconcile\] settled \d+ payment\(s\) left over at start-up/.test(running().output()) ? true : undefined,
    );

    const retry = await retryUntilAnswered(orderNo, key);
    expect([200, 201], retry.text).toContain(retry.status);
    expect(retry.json()).toMatchObject({ status: 'PAID', orderNo, chargeId: charge?.id });
    expect(await chargesOf(databaseUrl, orderNo)).toHaveLength(1);
  });

  it('the request key alone (layers 3-5 off): after its lease, the retry takes the dead claim over, asks the bank, and gets the one charge', async () => {
    const { orderNo, key } = payments.requestKeyOnly;
    const [charge] = await chargesOf(databaseUrl, orderNo);
    const retry = await retryUntilAnswered(orderNo, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.json()).toMatchObject({ status: 'PAID', chargeId: charge?.id });
    expect(await chargesOf(databaseUrl, orderNo)).toHaveLength(1);
  });

  it('with every defence off, the retry charges the card again', async () => {
    const { orderNo, key } = payments.undefended;
    const retry = await retryUntilAnswered(orderNo, key);
    expect(retry.status, retry.text).toBe(201);
    expect(await chargesOf(databaseUrl, orderNo)).toHaveLength(2);
  });
});

async function fetchOrder(orderNo: string): Promise<unknown> {
  const answer = await send(`${running().url}/api/orders/${orderNo}`);
  expect(answer.status).toBe(200);
  return answer.json();
}
