// The refund pipeline against the real Redis and PostgreSQL, under real concurrency. The numbers that matter: how
// many refunds the bank made, and the order's ledger (charged − refunded), which must never go below zero.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ALL_OFF,
  ALL_ON,
  awayPastHalfLease,
  holdAt,
  newOrder,
  only,
  orderRow,
  SimulatedCrash,
  setOrderLab,
  sleep,
  testPayOptions,
} from '../../test/payments.ts';
import { getDb } from '../db.ts';
import type { LabSettingsPatch } from '../lab/settings.ts';
import { listCharges, REPORT_PAGE } from '../payments/bank.ts';
import { pay } from '../payments/pay.ts';
import { type CallerScope, clientScope } from '../session.ts';
import { reconcileStaleRefunds } from './reconcile.ts';
import { defaultRefundOptions, type RefundResult, refund } from './refund.ts';

const caller = (): CallerScope => clientScope(`refunds-${randomUUID().slice(0, 8)}`);

/** A paid order of $42.00 under these settings, and its caller. */
async function paidOrder(lab: LabSettingsPatch = { layers: ALL_ON }) {
  const who = caller();
  const orderNo = await newOrder(lab);
  await getDb().order.update({ where: { orderNo }, data: { owner: who } });
  const paid = await pay({ orderNo, caller: who, channel: 'api', idempotencyKey: `pay-${orderNo}` }, testPayOptions());
  expect(paid.kind).toBe('completed');
  return { orderNo, who };
}

async function bankRefunds(orderNo: string) {
  return getDb().$queryRaw<Array<{ amountCents: number }>>`
    SELECT r.amount_cents AS "amountCents" FROM bank_refunds r JOIN bank_charges c ON c.id = r.charge_id
    WHERE c.merchant_ref = ${orderNo}`;
}

const ask = (orderNo: string, who: CallerScope, amountCents: number, requestId: string) =>
  refund({ orderNo, caller: who, channel: 'api', amountCents, requestId }, defaultRefundOptions());

const kinds = (results: RefundResult[]) => results.map((result) => result.kind).sort();

describe('refunds, from the pipeline', () => {
  it('20 concurrent refunds of $5 with one request id: one refund, every answer its outcome or "in progress"', async () => {
    const { orderNo, who } = await paidOrder({ layers: ALL_ON, faults: { bankLatencyMs: 200 } });
    const results = await Promise.all(Array.from({ length: 20 }, () => ask(orderNo, who, 500, 'rq-one')));
    expect(await bankRefunds(orderNo)).toEqual([{ amountCents: 500 }]);
    expect(results.filter((r) => r.kind === 'completed')).toHaveLength(1);
    expect(results.every((r) => ['completed', 'duplicate', 'in_progress'].includes(r.kind))).toBe(true);
    expect((await orderRow(orderNo)).refundedCents).toBe(500);
  });

  it('two refunds of $5 with two request ids: two refunds', async () => {
    const { orderNo, who } = await paidOrder();
    const [first, second] = [await ask(orderNo, who, 500, 'rq-a'), await ask(orderNo, who, 500, 'rq-b')];
    expect([first.kind, second.kind]).toEqual(['completed', 'completed']);
    expect(await bankRefunds(orderNo)).toHaveLength(2);
    expect((await orderRow(orderNo)).refundedCents).toBe(1000);
  });

  it('20 concurrent refunds of $30 with 20 ids: exactly one succeeds, the others are told how much is left', async () => {
    const { orderNo, who } = await paidOrder({ layers: ALL_ON, faults: { bankLatencyMs: 100 } });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(orderNo, who, 3_000, `rq-${i}`)));
    expect(kinds(results)).toEqual(['completed', ...Array(19).fill('exceeds')]);
    for (const result of results) if (result.kind === 'exceeds') expect(result.leftCents).toBe(1_200);
    expect(await bankRefunds(orderNo)).toEqual([{ amountCents: 3_000 }]);
    expect((await orderRow(orderNo)).refundedCents).toBe(3_000);
  });

  it('a refund of an unpaid order is refused, and writes nothing', async () => {
    const who = caller();
    const orderNo = await newOrder({ layers: ALL_ON });
    await getDb().order.update({ where: { orderNo }, data: { owner: who } });
    expect(await ask(orderNo, who, 500, 'rq-unpaid')).toMatchObject({ kind: 'not_paid', status: 'PENDING' });
    expect(await getDb().refund.count({ where: { orderNo } })).toBe(0);
  });

  it('an order retention pruned between the refund’s record and its claim: "no such order", nothing claimed, nothing refunded', async () => {
    const { orderNo, who } = await paidOrder();
    // Retention's DELETE, on a snapshot taken before the refund's row was written: the order goes, the row stays
    // (the bank's books live apart, as with BANK_DATABASE_URL: its charge stays, and would be refunded).
    const prune = async (point: string) => {
      if (point !== 'order.claim') return;
      await getDb().$executeRaw`DELETE FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = ${orderNo}`;
      await getDb().$executeRaw`DELETE FROM orders WHERE order_no = ${orderNo}`;
    };
    const request = { orderNo, caller: who, channel: 'api', amountCents: 500, requestId: 'rq-pruned' } as const;
    const result = await refund(request, { ...defaultRefundOptions(), at: prune });
    expect(result.kind).toBe('order_not_found');
    expect(await bankRefunds(orderNo)).toEqual([]);
    const claims = await getDb().$queryRaw<Array<{ status: string; dedupRows: number }>>`
      SELECT status::text, (SELECT count(*)::int FROM idempotent_record
        WHERE biz_type = 'REFUND' AND biz_no LIKE ${`${orderNo}/%`}) AS "dedupRows"
      FROM refunds WHERE order_no = ${orderNo}`;
    expect(claims).toEqual([{ status: 'REQUESTED', dedupRows: 0 }]);
  });

  it('with no claim (layers 3 and 4 off), an order retention pruned before the ledger counted the refund: "no such order", nothing refunded', async () => {
    const { orderNo, who } = await paidOrder({ layers: only('requestKey') });
    // Pruned as layer 2 claims the refund's key, before its row is written: the row then outlives the order.
    const prune = async (point: string) => {
      if (point !== 'key.claim') return;
      await getDb().$executeRaw`DELETE FROM orders WHERE order_no = ${orderNo}`;
    };
    const request = { orderNo, caller: who, channel: 'api', amountCents: 500, requestId: 'rq-pruned-bare' } as const;
    const result = await refund(request, { ...defaultRefundOptions(), at: prune });
    expect(result.kind).toBe('order_not_found');
    expect(await bankRefunds(orderNo)).toEqual([]);
  });

  it('a charge its payment could not record (layer 5 alone, the process died after the bank): the refund asks the bank, records it and refunds', async () => {
    const who = caller();
    const orderNo = await newOrder({ layers: only('bankKey'), faults: { crashAfterCharge: true } });
    await getDb().order.update({ where: { orderNo }, data: { owner: who } });
    const paying = pay({ orderNo, caller: who, channel: 'api', idempotencyKey: `pay-${orderNo}` }, testPayOptions());
    // The bank charged; the books do not know it (the order PENDING: a sweep of another test's may record it first,
    // so this is not asserted; on the code before, this refund was told "not paid").
    await expect(paying).rejects.toThrow(SimulatedCrash);
    await setOrderLab(orderNo, { layers: only('bankKey'), faults: {} });

    expect(await ask(orderNo, who, 500, 'rq-behind')).toMatchObject({ kind: 'completed' });
    const [charge] = await listCharges(orderNo);
    expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', chargeId: charge?.id, refundedCents: 500 });
    expect(await bankRefunds(orderNo)).toEqual([{ amountCents: 500 }]);
    expect(await getDb().outboxEvent.count({ where: { key: orderNo, topic: 'payment.paid' } })).toBe(1);
  });

  it('a payment whose claim is still held: "payment in progress", nothing written; once abandoned, the refund settles it and refunds', async () => {
    const who = caller();
    // A lease long enough that the first refund comes within it on a busy machine too (the sweep waits two).
    const claims = { leaseMs: 1_000 };
    const orderNo = await newOrder({ layers: ALL_ON, faults: { crashAfterCharge: true }, claims });
    await getDb().order.update({ where: { orderNo }, data: { owner: who } });
    const paying = pay({ orderNo, caller: who, channel: 'api', idempotencyKey: `pay-${orderNo}` }, testPayOptions());
    await expect(paying).rejects.toThrow(SimulatedCrash);
    await setOrderLab(orderNo, { layers: ALL_ON, faults: {}, claims });

    expect(await ask(orderNo, who, 500, 'rq-early')).toMatchObject({
      kind: 'payment_in_progress',
      status: 'PROCESSING',
    });
    expect(await getDb().refund.count({ where: { orderNo } })).toBe(0);
    await sleep(2 * claims.leaseMs + 100); // the sweep's patience: two leases
    // As a client would: again after a 409 (another test's sweep may be settling the same claim at that moment).
    let answer = await ask(orderNo, who, 500, 'rq-early');
    for (let tries = 0; answer.kind === 'payment_in_progress' && tries < 10; tries++) {
      await sleep(200);
      answer = await ask(orderNo, who, 500, 'rq-early');
    }
    expect(answer).toMatchObject({ kind: 'completed' });
    const [charge] = await listCharges(orderNo);
    expect(await orderRow(orderNo)).toMatchObject({ status: 'PAID', chargeId: charge?.id, refundedCents: 500 });
  });

  it('with every defence off, the 20 refunds with one id refund until the ledger refuses: never more than charged', async () => {
    const { orderNo, who } = await paidOrder({ layers: ALL_OFF, faults: { bankLatencyMs: 100 } });
    const results = await Promise.all(Array.from({ length: 20 }, () => ask(orderNo, who, 500, 'rq-same')));
    const made = await bankRefunds(orderNo);
    expect(made.length).toBe(8); // $40 of $42: the ledger refuses the rest
    expect(results.filter((r) => r.kind === 'exceeds')).toHaveLength(12);
    expect((await orderRow(orderNo)).refundedCents).toBe(4_000);
  });

  it('keyed by the order number, the second legitimate refund is refused as "the same"', async () => {
    const { orderNo, who } = await paidOrder({
      layers: only('requestKey', 'stateMachine', 'uniqueConstraint', 'bankKey'),
      keys: { refunds: 'orderNo' },
    });
    const first = await ask(orderNo, who, 500, 'rq-first');
    const second = await ask(orderNo, who, 500, 'rq-second');
    expect(first.kind).toBe('completed');
    expect(second).toMatchObject({ kind: 'duplicate' });
    expect(await bankRefunds(orderNo)).toHaveLength(1);
  });

  it('with the bank key alone, 20 retries of one refund: one refund, and only its amount on the ledger', async () => {
    const { orderNo, who } = await paidOrder({ layers: only('bankKey'), faults: { bankLatencyMs: 100 } });
    await Promise.all(Array.from({ length: 20 }, () => ask(orderNo, who, 500, 'rq-keyed')));
    expect(await bankRefunds(orderNo)).toEqual([{ amountCents: 500 }]);
    // The bank's replays moved nothing: their amounts came off again (review finding: 4000 stayed on).
    expect((await orderRow(orderNo)).refundedCents).toBe(500);
    expect((await ask(orderNo, who, 3_000, 'rq-then')).kind).toBe('completed');
  });
});

describe('a refund attempt that lost its key while away, but not its refund', () => {
  it('gives its claim back when it stops, its amount off the ledger: the next retry refunds at once', async () => {
    const { orderNo, who } = await paidOrder({ layers: ALL_ON, claims: { leaseMs: 1_000 } });
    // One clock, moved by hand (as the payment's test in lib/payments/pay.int.test.ts): the key claimed at +0, the
    // refund at +400, then a pause before the bank until the first attempt is woken.
    const start = Date.now();
    let clock = start;
    const now = () => clock;
    const hold = holdAt('pay.beforeBank', (point) => {
      if (point === 'order.claim') clock = start + 400;
    });
    const asked = { orderNo, caller: who, channel: 'api' as const, amountCents: 500, requestId: 'rq-lost-key' };
    const first = refund(asked, { ...defaultRefundOptions(), now, at: hold.at });
    await hold.reached;
    clock = start + 1_300; // the key's lease has run out, the refund's claim's has not
    expect(await refund(asked, { ...defaultRefundOptions(), now })).toMatchObject({ kind: 'in_progress' });
    clock = start + 2_900;
    hold.release();
    expect(await first).toMatchObject({ kind: 'in_progress', answeredBy: 'requestKey', takenOver: true });
    expect(await getDb().refund.findFirst({ where: { orderNo } })).toMatchObject({ status: 'REQUESTED' });
    expect((await orderRow(orderNo)).refundedCents).toBe(0);
    expect((await refund(asked, { ...defaultRefundOptions(), now })).kind).toBe('completed');
    expect(await bankRefunds(orderNo)).toEqual([{ amountCents: 500 }]);
    expect((await orderRow(orderNo)).refundedCents).toBe(500);
  });
});

describe('a refund attempt whose key cannot be renewed after a pause (its store fails)', () => {
  it('gives its claim back, its amount off the ledger, and fails retryably: the retry refunds at once', async () => {
    const { orderNo, who } = await paidOrder({ layers: ALL_ON, claims: { leaseMs: 1_000 } });
    // As the payment's test in lib/payments/pay.int.test.ts: away past half the lease, the refund's claim renewed,
    // then the key's store fails.
    const unreachable = new Error('Connection is closed.');
    const asked = { orderNo, caller: who, channel: 'api' as const, amountCents: 500, requestId: 'rq-key-unrenewed' };
    const { settled, now } = await awayPastHalfLease(
      (clock) => refund(asked, { ...defaultRefundOptions(), ...clock }),
      (point) => {
        if (point === 'key.renew') throw unreachable;
      },
    );
    await expect(settled).rejects.toBe(unreachable);
    expect(await getDb().refund.findFirst({ where: { orderNo } })).toMatchObject({ status: 'REQUESTED' });
    expect((await orderRow(orderNo)).refundedCents).toBe(0);
    expect((await refund(asked, { ...defaultRefundOptions(), now })).kind).toBe('completed');
    expect(await bankRefunds(orderNo)).toEqual([{ amountCents: 500 }]);
  });
});

describe('a refund whose attempt died', () => {
  const LEASE_MS = 30_000;
  const later = () => Date.now() + 3 * LEASE_MS;

  it('before the bank: the sweep gives its claim back, and its amount comes off the ledger', async () => {
    const { orderNo, who } = await paidOrder();
    await setOrderLab(orderNo, { layers: ALL_ON, faults: { crashBeforeCharge: true } });
    await expect(ask(orderNo, who, 3_000, 'rq-dies')).rejects.toThrow(SimulatedCrash);
    expect((await orderRow(orderNo)).refundedCents).toBe(3_000);
    await reconcileStaleRefunds({ now: later, orderNos: [orderNo] });
    expect((await orderRow(orderNo)).refundedCents).toBe(0);
    expect(await getDb().refund.findFirst({ where: { orderNo } })).toMatchObject({
      status: 'REQUESTED',
      reserved: false,
    });
    expect(await bankRefunds(orderNo)).toEqual([]);
  });

  it('after the bank: the sweep finds the refund and records it, its amount kept', async () => {
    const { orderNo, who } = await paidOrder();
    await setOrderLab(orderNo, { layers: ALL_ON, faults: { crashAfterCharge: true } });
    await expect(ask(orderNo, who, 3_000, 'rq-dies-late')).rejects.toThrow(SimulatedCrash);
    await reconcileStaleRefunds({ now: later, orderNos: [orderNo] });
    const row = await getDb().refund.findFirst({ where: { orderNo } });
    expect(row).toMatchObject({ status: 'SUCCEEDED', reserved: true });
    expect((await orderRow(orderNo)).refundedCents).toBe(3_000);
    expect(await bankRefunds(orderNo)).toEqual([{ amountCents: 3_000 }]);
    // The caller's retry gets that refund, and the bank makes no other.
    await setOrderLab(orderNo, { layers: ALL_ON });
    expect(await ask(orderNo, who, 3_000, 'rq-dies-late')).toMatchObject({ kind: 'duplicate' });
    expect(await bankRefunds(orderNo)).toHaveLength(1);
  });

  it('with no claim (layers 3 and 4 off) and dead after the bank: the bank’s books record it', async () => {
    const { orderNo, who } = await paidOrder({ layers: only('requestKey') });
    await setOrderLab(orderNo, { layers: only('requestKey'), faults: { crashAfterCharge: true } });
    await expect(ask(orderNo, who, 500, 'rq-unclaimed')).rejects.toThrow(SimulatedCrash);
    expect(await getDb().refund.findFirst({ where: { orderNo } })).toMatchObject({ status: 'REQUESTED' });
    await reconcileStaleRefunds({ now: later, orderNos: [orderNo], landedSince: 0 });
    expect(await getDb().refund.findFirst({ where: { orderNo } })).toMatchObject({ status: 'SUCCEEDED' });
  });

  it('reads the bank’s report to its end: a refund to record behind a full page of others is found', async () => {
    const { orderNo, who } = await paidOrder({ layers: only('requestKey') });
    await setOrderLab(orderNo, { layers: only('requestKey'), faults: { crashAfterCharge: true } });
    await expect(ask(orderNo, who, 500, 'rq-behind-a-page')).rejects.toThrow(SimulatedCrash);
    // A page of the bank's refunds that landed just before it, none of them this merchant's to record.
    await getDb().$executeRaw`
      INSERT INTO bank_refunds (id, charge_id, merchant_ref, amount_cents, created_at)
      SELECT 'rf_page_' || ${orderNo} || '_' || i, r.charge_id, ${orderNo} || '/elsewhere-' || i, 1,
        r.created_at - interval '1 second'
      FROM bank_refunds r, generate_series(1, ${REPORT_PAGE}) AS i
      WHERE r.merchant_ref LIKE ${`${orderNo}/%`}`;
    try {
      await reconcileStaleRefunds({ now: later, orderNos: [orderNo], landedSince: 0 });
      expect(await getDb().refund.findFirst({ where: { orderNo } })).toMatchObject({ status: 'SUCCEEDED' });
    } finally {
      await getDb().$executeRaw`DELETE FROM bank_refunds WHERE id LIKE ${`rf_page_${orderNo}_%`}`;
    }
  });
});
