// The straight line is a fair yardstick for the pipeline's shape only if it makes the guarded payment's own work
// (decision 039): the same rows in PostgreSQL and the same record in Redis, with the same checks. Compared here with
// an API payment through the pipeline with the lab off, on real PostgreSQL and Redis: what each leaves behind, and the
// statements and commands each sends on its way there.
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { chargeCount, orderRow, testPayOptions, withTheLabOff } from '../../test/payments.ts';
import { getDb } from '../db.ts';
import { requestKeyName } from '../defences/request-key/record.ts';
import { createOrder } from '../payments/orders.ts';
import { pay } from '../payments/pay.ts';
import { getRedis } from '../redis.ts';
import { type CallerScope, clientScope } from '../session.ts';
import { straightLinePayment } from './straight-line.ts';

// The lab off, as the benchmark's lab-off instance runs.
withTheLabOff();

const caller = () => clientScope(`bench-${Math.random().toString(36).slice(2)}`);

/** What a payment left behind, without what differs by nature (ids, times, the order's number). */
async function leftBehind(orderNo: string, payer: CallerScope, key: string) {
  const order = await orderRow(orderNo);
  const [row] = await getDb().$queryRaw<Array<{ fence: number; firstFence: number; outcome: { status: string } }>>`
    SELECT fence, first_fence AS "firstFence", outcome FROM idempotent_record
    WHERE biz_type = 'PAYMENT' AND biz_no = ${orderNo}`;
  const events = await getDb().$queryRaw<Array<{ topic: string; charged: boolean }>>`
    SELECT topic, charge_id IS NOT NULL AS charged FROM outbox WHERE key = ${orderNo}`;
  const stored = JSON.parse((await getRedis().get(requestKeyName(payer, key))) ?? 'null');
  return {
    charges: await chargeCount(orderNo),
    order: { status: order.status, fence: order.fence, claimed: order.attemptId ?? order.claimedAt ?? null },
    row: row && { fence: row.fence, firstFence: row.firstFence, status: row.outcome?.status },
    events,
    key: stored && { state: stored.state, fields: Object.keys(stored).sort(), status: stored.outcome?.status },
  };
}

/**
 * What `work` sends to PostgreSQL and Redis from this process, in order: each statement by its prepared name (the
 * hot path's, composed once for their shape) or its text, each Redis command by its name (a script by its SHA), but
 * the timeline's. It notes what is sent, and sends it.
 */
async function sentBy(work: () => Promise<unknown>): Promise<{ statements: string[]; commands: string[] }> {
  const statements: string[] = [];
  const commands: string[] = [];
  const query = pg.Client.prototype.query;
  const sendCommand = Redis.prototype.sendCommand;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config] = args as [string | { name?: string; text?: string }];
    statements.push(typeof config === 'string' ? config : (config.name ?? config.text ?? '?'));
    return (query as (...rest: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof sendCommand>) {
    const [command] = args;
    // Not the lab's timeline (this test process has a reader of the spans; the benchmark's lab-off instance has
    // none): it writes the lanes of 25 ms at once, whichever payment they are from.
    const key = String(command.name === 'evalsha' ? command.args[2] : command.args[0]);
    if (key.startsWith('lab:timeline') || key.startsWith('{lab:timeline}')) return sendCommand.apply(this, args);
    commands.push(command.name === 'evalsha' ? `evalsha ${String(command.args[0])}` : command.name);
    return sendCommand.apply(this, args);
  };
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query;
    Redis.prototype.sendCommand = sendCommand;
  }
  // The ids and the order's number differ by nature; the statements and scripts must not.
  return { statements: statements.map((text) => text.replace(/\s+/g, ' ')), commands };
}

describe('the straight line (the benchmark’s yardstick)', () => {
  it('sends what an API payment through the pipeline sends, and leaves what it leaves: one charge, the same rows, the same record', async () => {
    const payer = caller();
    // Each once before, so that neither pays for this process's first connections and first statements.
    const [warmPipeline, warmStraight] = [
      (await createOrder({}, payer)).orderNo,
      (await createOrder({}, payer)).orderNo,
    ];
    await pay(
      { orderNo: warmPipeline, caller: payer, channel: 'api', idempotencyKey: 'warm-pipeline', amountCents: 4_200 },
      testPayOptions(),
    );
    await straightLinePayment({ orderNo: warmStraight, amountCents: 4_200, caller: payer, key: 'warm-straight' });
    const viaPipeline = (await createOrder({}, payer)).orderNo;
    const straight = (await createOrder({}, payer)).orderNo;
    let paid: Awaited<ReturnType<typeof pay>> | undefined;
    const pipelineSent = await sentBy(async () => {
      paid = await pay(
        { orderNo: viaPipeline, caller: payer, channel: 'api', idempotencyKey: 'k-pipeline', amountCents: 4_200 },
        testPayOptions(),
      );
    });
    expect(paid?.kind).toBe('completed');
    let answer: Awaited<ReturnType<typeof straightLinePayment>> | undefined;
    const straightSent = await sentBy(async () => {
      answer = await straightLinePayment({ orderNo: straight, amountCents: 4_200, caller: payer, key: 'k-straight' });
    });
    expect(answer).toMatchObject({ kind: 'completed', outcome: { status: 'PAID', orderNo: straight } });
    // The same statements and scripts, in the same order: the straight line takes the pipeline's round trips.
    expect(straightSent).toEqual(pipelineSent);
    // And something was noted: the claim and the record (the hot path's), the bank's charge between; the two scripts.
    expect(pipelineSent.statements).toHaveLength(3);
    expect(pipelineSent.statements.filter((name) => name.startsWith('hot_'))).toHaveLength(2);
    expect(pipelineSent.commands.filter((name) => name.startsWith('evalsha'))).toHaveLength(2);

    const expected = await leftBehind(viaPipeline, payer, 'k-pipeline');
    expect(expected).toMatchObject({
      charges: 1,
      order: { status: 'PAID', fence: 1, claimed: null },
      row: { fence: 1, firstFence: 1, status: 'PAID' },
      events: [{ topic: 'payment.paid', charged: true }],
      key: { state: 'done', status: 'PAID' },
    });
    expect(await leftBehind(straight, payer, 'k-straight')).toEqual(expected);
  });

  it('checks the payer and the amount in the order’s claim: nothing charged, the order untouched, the key given back', async () => {
    const owner = caller();
    const { orderNo } = await createOrder({}, owner);
    const other = caller();
    expect(await straightLinePayment({ orderNo, amountCents: 4_200, caller: other, key: 'k' })).toMatchObject({
      kind: 'in_progress',
      answeredBy: 'stateMachine',
    });
    expect(await straightLinePayment({ orderNo, amountCents: 1, caller: owner, key: 'k' })).toMatchObject({
      kind: 'in_progress',
      answeredBy: 'stateMachine',
    });
    expect(await chargeCount(orderNo)).toBe(0);
    expect((await orderRow(orderNo)).status).toBe('PENDING');
    expect(await getRedis().exists(requestKeyName(other, 'k'), requestKeyName(owner, 'k'))).toBe(0);
  });

  it('answers a key it holds "in progress" and charges once', async () => {
    const payer = caller();
    const { orderNo } = await createOrder({}, payer);
    const twice = await Promise.all([
      straightLinePayment({ orderNo, amountCents: 4_200, caller: payer, key: 'k' }),
      straightLinePayment({ orderNo, amountCents: 4_200, caller: payer, key: 'k' }),
    ]);
    expect(twice.map((answer) => answer.kind).sort()).toEqual(['completed', 'in_progress']);
    expect(await chargeCount(orderNo)).toBe(1);
  });
});
