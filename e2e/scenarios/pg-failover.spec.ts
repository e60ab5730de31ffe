// Source 4 in PostgreSQL itself: the primary is lost, Patroni promotes the replica, and what the primary had not
// replicated is gone. A real primary and streaming replica under Patroni, with etcd and HAProxy
// (scripts/lib/patroni.ts), and an app instance of this file's own whose DATABASE_URL is HAProxy; the simulated
// bank keeps its books in the tests' own PostgreSQL (BANK_DATABASE_URL), which does not fail over, as a card
// network's would not. Two rows, one topology each: replication asynchronous (PostgreSQL's default), synchronous
// (Patroni's synchronous mode). `npm run scenarios` only: about 30 s a row here, beside servers of its own.
//
// Asynchronously, the primary acknowledges a commit, then streams it to the replica. A primary that dies in between
// takes the commit with it. In production that window is the replication lag (usually milliseconds, longer under
// load); here it is held open on purpose, so that the loss happens every run:
//   1. the replica's WAL receiver is paused (SIGSTOP: it holds its socket and reads nothing), and the primary's WAL
//      sender is ended: nothing committed from now on is in flight to the replica, and the paused receiver cannot
//      reconnect to ask for it;
//   2. eight payments, one per configuration, claim their orders (layers 3 and 4, on the primary alone) and wait
//      at the bank (5 s): the charge is on the card once the bank holds the payment;
//   3. the primary's machine is lost (Patroni and PostgreSQL, SIGKILL); the receiver resumes and finds it gone;
//   4. the leader key expires (10 s), Patroni promotes the replica, HAProxy sends new connections to it;
//   5. the client retries each payment with its Idempotency-Key: layer 2's claim is in Redis, the bank's key (5)
//      at the bank; the order's claim and dedup row (3, 4) never reached the replica.
// Synchronously (synchronous_commit on, the replica named in synchronous_standby_names), a commit returns only
// once the replica has it on disk: step 1 would hold every commit (tried), so the row runs without it (the primary
// is seen replicating synchronously first), and the promoted replica holds every claim. This app runs no background
// jobs: every few seconds the reconciler records on its order each charge that landed on the bank's settlement
// report more than 10 s before, so after a failover of 10 s or more it and the client's retry race for each order,
// and which came first would decide the cell. Without it the retry meets the database as the failover left it, as
// a retry that beats the reconciler does (decision 034).

import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyMigrations } from '../../scripts/lib/migrations';
import type { RunningApp } from '../../scripts/lib/next-app';
import { type PatroniNode, type PatroniTopology, startPatroniTopology } from '../../scripts/lib/patroni';
import { chargeCount, expect, test } from '../fixtures';
import { categorizeResponse, type RunCell, scenarioInOneRun } from './cell';
import { attachOutputsOnFailure, payingClient, startOwnApp } from './failover';
import { CONFIGURATIONS, DATABASE_FAILOVER_ROWS } from './matrix';

const OFFSET = Number(process.env.TEST_PORT_OFFSET ?? 0);
const APP_PORT = 3146 + OFFSET;
const APP = `http://127.0.0.1:${APP_PORT}`;
/** etcd on this port and the next, PostgreSQL + 2 and + 3, Patroni's REST APIs + 4 and + 5, HAProxy + 6. */
const BASE_PORT = 26480 + OFFSET;
const CLIENT = 'pg-failover-shop';
const { pay, retryUntilFinal } = payingClient({
  app: APP,
  client: CLIENT,
  keyPrefix: 'pg-failover-',
  timeoutMs: 60_000,
  attempts: 30,
});

// Its own servers and about 30 s a row: `npm run scenarios` runs it, npm test does not (it says so as a skip).
test.skip(!process.env.DATABASE_FAILOVER_SCENARIOS, 'the database failover runs in `npm run scenarios` only');
// Each row fails its own topology over, on the same ports: one at a time.
test.describe.configure({ mode: 'serial' });

let topology: PatroniTopology | undefined;
let app: RunningApp | undefined;
/** The replica's WAL receiver while it is paused. */
let receiverToResume: number | undefined;

// biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature
test.afterEach(async ({}, testInfo) => {
  await attachOutputsOnFailure(testInfo, { 'the app': app?.output, 'the database servers': topology?.output });
  if (receiverToResume) {
    try {
      process.kill(receiverToResume, 'SIGKILL');
    } catch {
      // gone with its postmaster
    }
    receiverToResume = undefined;
  }
  await app?.stop();
  await topology?.stop();
  app = undefined;
  topology = undefined;
});

for (const row of DATABASE_FAILOVER_ROWS) {
  scenarioInOneRun(row.id, 'one failover, eight orders: one per configuration', async ({ request }, labOf) => {
    topology = await startPatroniTopology({
      basePort: BASE_PORT,
      // Under the system's temporary folder: PostgreSQL runs as the postgres user, who may not reach the checkout.
      dataDir: path.join(tmpdir(), `payonce-patroni-${BASE_PORT}`),
      synchronous: row.synchronous,
    });
    await applyMigrations(topology.url);
    // The merchant's database through HAProxy, the bank's the tests' own.
    app = await startOwnApp(APP_PORT, {
      DATABASE_URL: topology.url,
      BANK_DATABASE_URL: process.env.DATABASE_URL ?? '',
      BACKGROUND_JOBS: 'false',
      INSTANCE_NAME: 'pg-failover-app',
    });
    const [primary, replica] = topology.nodes;

    // An order per configuration, each with its defences; the client pays each with its own key.
    const orders = await Promise.all(
      CONFIGURATIONS.map(async ({ id, layers }) => {
        const response = await request.post(`${APP}/api/orders`, {
          headers: { 'x-client-id': CLIENT },
          data: { amountCents: 4200, lab: labOf(layers) },
        });
        expect(response.status(), await response.text()).toBe(201);
        return { configuration: id, orderNo: ((await response.json()) as { orderNo: string }).orderNo };
      }),
    );
    // The orders themselves are on the replica: only what follows is at stake.
    await topology.untilReplicaCaughtUp();

    // 1. Asynchronous: nothing committed from here on reaches the replica. Synchronous: the primary waits for it.
    const [wal] = await replica.query<{ pid: number }>('SELECT pid FROM pg_stat_wal_receiver');
    expect(wal?.pid, 'the replica streams from the primary').toBeDefined();
    const receiver = !row.synchronous ? wal?.pid : undefined;
    // Resumed whatever happens next: a receiver left stopped would outlive its topology.
    receiverToResume = receiver;
    if (receiver) {
      process.kill(receiver, 'SIGSTOP');
      const ended = await primary.query<{ ended: boolean }>(
        'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_replication',
      );
      expect(ended.map((sender) => sender.ended)).toEqual([true]);
      // pg_terminate_backend only signals: the sender is gone once the primary lists no replica.
      await expect
        .poll(async () => (await primary.query('SELECT pid FROM pg_stat_replication')).length, { timeout: 10_000 })
        .toBe(0);
    } else {
      expect(await primary.query('SELECT sync_state FROM pg_stat_replication')).toEqual([{ sync_state: 'sync' }]);
    }

    // 2. The payments: each claims (layer 2 in Redis; 3 and 4 on the primary) and waits at the bank.
    const firsts = orders.map(({ orderNo }) => pay(request, orderNo));
    await expect
      .poll(async () => (await Promise.all(orders.map(({ orderNo }) => chargeCount(orderNo)))).join(), {
        timeout: 15_000,
        intervals: [50],
      })
      .toBe(orders.map(() => 1).join());
    // The claims of layers 3 and 4: the order PROCESSING (all on, 3 alone), the dedup row (all on, 4 alone).
    const orderNos = orders.map(({ orderNo }) => orderNo);
    expect(await claimsOn(primary, orderNos)).toEqual({ processing: 2, dedupRows: 2 });

    // 3-4. The primary's machine is lost; the replica is promoted; HAProxy follows it.
    await primary.kill();
    if (receiver) process.kill(receiver, 'SIGCONT');
    receiverToResume = undefined;
    await topology.untilPrimary(replica.name, 90_000);
    await expect
      .poll(async () => (await fetch(`${APP}/api/health`)).status, { timeout: 60_000, intervals: [200] })
      .toBe(200);
    // What the promoted replica holds of them: none asynchronously, all synchronously.
    const kept = row.synchronous ? 2 : 0;
    expect(await claimsOn(replica, orderNos)).toEqual({ processing: kept, dedupRows: kept });

    // 5. The client retries with the same key, as Retry-After says while the first is still running.
    const retries = await Promise.all(orders.map(({ orderNo }) => retryUntilFinal(request, orderNo)));

    // What the first requests were answered, whose database died under them: their charge (201), or 503 (the
    // database is unavailable, retry with the key); never a 500, never a stack trace.
    for (const [index, first] of (await Promise.all(firsts)).entries()) {
      const { configuration } = orders[index] ?? {};
      expect([201, 503], `${configuration}'s first request: ${first.text.slice(0, 500)}`).toContain(first.status);
      expect(first.text).not.toMatch(/\n\s+at\s/);
    }
    return orders.map(({ configuration, orderNo }, index): RunCell => {
      const answer = retries[index];
      return { configuration, orderNo, sees: answer ? categorizeResponse(answer.status, answer.headers) : 'error' };
    });
  });
}

/** The claims of layers 3 and 4 that a node holds for these orders. */
async function claimsOn(node: PatroniNode, orderNos: string[]): Promise<{ processing: number; dedupRows: number }> {
  const list = orderNos.map((orderNo) => `'${orderNo.replaceAll("'", "''")}'`).join(',');
  const [counts] = await node.query<{ processing: number; dedupRows: number }>(
    `SELECT (SELECT count(*)::int FROM orders WHERE status = 'PROCESSING' AND order_no IN (${list})) AS processing,
      (SELECT count(*)::int FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no IN (${list})) AS "dedupRows"`,
  );
  return counts ?? { processing: -1, dedupRows: -1 };
}
