// Retention against the real PostgreSQL: old settled rows go with everything that hangs on them; recent
// ones, and old ones still in doubt wherever a layer keeps the doubt, stay.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { getDb } from '../db.ts';
import { createOrder } from './orders.ts';
import { pruneOldRecords, runHousekeeping } from './retention.ts';

const DAY = 86_400_000;
/**
 * The tests that prune the whole database (retention's own job: no scope) do so in an era of their own: their old
 * rows are OLD_DAYS old and the cutoff CUTOFF_DAYS. Other files running beside them keep rows that are old by the
 * usual cutoff (the refunds' race explorer pays its orders 40 days ago), and a prune of everything older than 30 days
 * took such an order in the middle of its schedule: a finding that did not fail again when replayed.
 */
const OLD_DAYS = 400;
const CUTOFF_DAYS = 365;

async function orderAged(
  days: number,
  status: 'PAID' | 'PENDING' | 'UNKNOWN',
  has: { charge?: boolean; dedupRow?: 'settled' | 'inDoubt' } = {},
) {
  const { orderNo } = await createOrder({});
  const createdAt = new Date(Date.now() - days * DAY);
  const chargeId = `ch_ret_${orderNo}`;
  await getDb().order.update({
    where: { orderNo },
    data: { createdAt, updatedAt: createdAt, status, chargeId: status === 'PAID' ? chargeId : null },
  });
  if (has.charge ?? true) {
    await getDb().bankCharge.create({ data: { id: chargeId, merchantRef: orderNo, amountCents: 1, createdAt } });
    await getDb().receipt.create({
      data: { orderNo, chargeId, amountCents: 1, consumer: 'retention-test', sentAt: createdAt },
    });
  }
  if (has.dedupRow) {
    const outcome = has.dedupRow === 'settled' ? { status: 'PAID' } : undefined;
    await getDb().idempotentRecord.create({
      data: { bizType: 'PAYMENT', bizNo: orderNo, owner: null, createdAt, claimedAt: createdAt, outcome },
    });
  }
  return orderNo;
}

/** Until another session waits for a lock `client`'s open transaction holds (retention's DELETE, in these tests). */
async function untilSomeoneWaitsOn(client: pg.Client, timeoutMs: number): Promise<void> {
  const waiting = async () =>
    (
      await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))',
      )
    ).rows[0]?.n;
  await expect.poll(waiting, { timeout: timeoutMs, interval: 20 }).toBeGreaterThan(0);
}

describe('retention', () => {
  it('prunes old refunds whose order is gone that no bank answered for, with their dedup rows; keeps the rest', async () => {
    // Rows a refund wrote after retention pruned its order, its attempt dead before it gave its claim back (no
    // order row: the refunds table has no foreign key to it, decision 032).
    const orderNo = `ord_orphan_${Date.now().toString(36)}`;
    const aged = (days: number) => new Date(Date.now() - days * DAY);
    const refund = (refundKey: string, days: number, status: 'PROCESSING' | 'REQUESTED' | 'UNKNOWN') => ({
      orderNo,
      refundKey,
      amountCents: 500,
      status,
      attemptId: status === 'PROCESSING' ? 'dead-attempt' : null,
      createdAt: aged(days),
      updatedAt: aged(days),
    });
    await getDb().refund.createMany({
      data: [refund('claimed', 40, 'PROCESSING'), refund('given-back', 40, 'REQUESTED')],
    });
    // Kept: a recent one (an attempt may still hold it), and one in doubt (a bank may have refunded it).
    await getDb().refund.createMany({ data: [refund('recent', 1, 'PROCESSING'), refund('in-doubt', 40, 'UNKNOWN')] });
    await getDb().idempotentRecord.create({
      data: { bizType: 'REFUND', bizNo: `${orderNo}/claimed`, owner: 'dead-attempt', createdAt: aged(40) },
    });
    const pruned = await runHousekeeping(new Date(), { retentionDays: 30 }, { orderNos: [orderNo] });
    expect(pruned.refunds).toBe(2);
    const left = await getDb().refund.findMany({ where: { orderNo }, select: { refundKey: true } });
    expect(left.map((row) => row.refundKey).sort()).toEqual(['in-doubt', 'recent']);
    expect(await getDb().idempotentRecord.count({ where: { bizType: 'REFUND', bizNo: `${orderNo}/claimed` } })).toBe(0);
  });

  it('prunes what is older than the cutoff and settled, with its charges, receipts and dedup rows', async () => {
    const old = await orderAged(OLD_DAYS, 'PAID', { dedupRow: 'settled' });
    const abandoned = await orderAged(OLD_DAYS, 'PENDING', { charge: false });
    const recent = await orderAged(1, 'PAID');
    await pruneOldRecords(new Date(Date.now() - CUTOFF_DAYS * DAY));
    const left = await getDb().order.findMany({
      where: { orderNo: { in: [old, abandoned, recent] } },
      select: { orderNo: true },
    });
    expect(left.map((order) => order.orderNo)).toEqual([recent]);
    const charges = await getDb().bankCharge.count({ where: { merchantRef: { in: [old, abandoned] } } });
    const receipts = await getDb().receipt.count({ where: { orderNo: { in: [old, abandoned] } } });
    const rows = await getDb().idempotentRecord.count({ where: { bizNo: { in: [old, abandoned] } } });
    expect([charges, receipts, rows]).toEqual([0, 0, 0]);
  });

  it('keeps an old payment in doubt wherever the doubt is kept: the order, a dedup row, a charge not recorded', async () => {
    const claimed = await orderAged(OLD_DAYS, 'UNKNOWN');
    const rowInDoubt = await orderAged(OLD_DAYS, 'PENDING', { charge: false, dedupRow: 'inDoubt' });
    const chargeNotRecorded = await orderAged(OLD_DAYS, 'PENDING');
    const kept = [claimed, rowInDoubt, chargeNotRecorded];
    await pruneOldRecords(new Date(Date.now() - CUTOFF_DAYS * DAY));
    const left = await getDb().order.findMany({ where: { orderNo: { in: kept } }, select: { orderNo: true } });
    expect(left.map((order) => order.orderNo).sort()).toEqual([...kept].sort());
    expect(await getDb().bankCharge.count({ where: { merchantRef: { in: kept } } })).toBe(2);
  });

  it('with the bank apart, asks the bank’s books for an unpaid order’s charge, and leaves the bank its rows', async () => {
    const paid = await orderAged(OLD_DAYS, 'PAID', { dedupRow: 'settled' });
    // Its charge is in the bank's books, which retention cannot read when they live in a database of their own.
    const unpaid = await orderAged(OLD_DAYS, 'PENDING');
    const abandoned = await orderAged(OLD_DAYS, 'PENDING', { charge: false });
    await pruneOldRecords(new Date(Date.now() - 30 * DAY), { orderNos: [paid, unpaid, abandoned], bankApart: true });
    const left = await getDb().order.findMany({
      where: { orderNo: { in: [paid, unpaid, abandoned] } },
      select: { orderNo: true },
    });
    expect(left.map((order) => order.orderNo)).toEqual([unpaid]);
    expect(await getDb().bankCharge.count({ where: { merchantRef: { in: [paid, unpaid] } } })).toBe(2);
    expect(await getDb().receipt.count({ where: { orderNo: paid } })).toBe(0);
  });

  it('keeps an old order a payment moved lately (its claim raised updated_at)', async () => {
    const orderNo = await orderAged(OLD_DAYS, 'PENDING', { charge: false });
    await getDb().order.update({ where: { orderNo }, data: { updatedAt: new Date() } });
    await pruneOldRecords(new Date(Date.now() - CUTOFF_DAYS * DAY));
    expect(await getDb().order.count({ where: { orderNo } })).toBe(1);
  });

  it('prunes an old order with its refunds, and keeps one whose refund is in doubt', async () => {
    const refunded = await orderAged(OLD_DAYS, 'PAID');
    const inDoubt = await orderAged(OLD_DAYS, 'PAID');
    const createdAt = new Date(Date.now() - OLD_DAYS * DAY);
    for (const [orderNo, status] of [
      [refunded, 'SUCCEEDED'],
      [inDoubt, 'UNKNOWN'],
    ] as const) {
      await getDb().refund.create({
        data: { orderNo, refundKey: 'rq_old', amountCents: 1, status, createdAt, updatedAt: createdAt },
      });
      await getDb().refundRequest.create({ data: { id: `rq_${orderNo}`, orderNo, openedBy: 'c.old', createdAt } });
      await getDb().bankRefund.create({
        data: {
          id: `re_${orderNo}`,
          chargeId: `ch_ret_${orderNo}`,
          merchantRef: `${orderNo}/rq_old`,
          amountCents: 1,
          createdAt,
        },
      });
    }
    await pruneOldRecords(new Date(Date.now() - CUTOFF_DAYS * DAY));
    const left = await getDb().order.findMany({
      where: { orderNo: { in: [refunded, inDoubt] } },
      select: { orderNo: true },
    });
    expect(left.map((order) => order.orderNo)).toEqual([inDoubt]);
    expect(await getDb().refund.count({ where: { orderNo: refunded } })).toBe(0);
    expect(await getDb().refundRequest.count({ where: { orderNo: refunded } })).toBe(0);
    expect(await getDb().bankRefund.count({ where: { chargeId: `ch_ret_${refunded}` } })).toBe(0);
    expect(await getDb().refund.count({ where: { orderNo: inDoubt } })).toBe(1);
  });

  it('keeps a refund without its order that moves while retention waits to delete it (judged again)', async () => {
    // Forced: another writer holds the refund's row (it moves it to UNKNOWN: a bank asked) while retention's orphan
    // step, which read it as an orphan no bank answered for, waits for it.
    const orderNo = `ord_orphan_moved_${Date.now().toString(36)}`;
    const old = new Date(Date.now() - 40 * DAY);
    await getDb().refund.create({
      data: { orderNo, refundKey: 'k', amountCents: 500, status: 'PROCESSING', createdAt: old, updatedAt: old },
    });
    const writer = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await writer.connect();
    let pruned: Awaited<ReturnType<typeof runHousekeeping>> | undefined;
    try {
      await writer.query('BEGIN');
      await writer.query(`UPDATE refunds SET status = 'UNKNOWN' WHERE order_no = $1`, [orderNo]);
      const pruning = runHousekeeping(new Date(), { retentionDays: 30 }, { orderNos: [orderNo] });
      await untilSomeoneWaitsOn(writer, 15_000);
      await writer.query('COMMIT');
      pruned = await pruning;
    } finally {
      await writer.end();
    }
    expect(pruned?.refunds).toBe(0);
    expect(await getDb().refund.findFirst({ where: { orderNo }, select: { status: true } })).toEqual({
      status: 'UNKNOWN',
    });
  });

  it('keeps an old fencing token the bank raises while retention waits to delete it (its age judged again)', async () => {
    // Forced: the bank's raise holds the token's row while retention's batch, which read it as old, waits for it.
    const lock = `order:retention-race-${Date.now()}`;
    const old = new Date(Date.now() - OLD_DAYS * DAY);
    await getDb().bankFence.create({ data: { lock, token: 1n, updatedAt: old } });
    const bank = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await bank.connect();
    try {
      await bank.query('BEGIN');
      await bank.query('UPDATE bank_fences SET token = 2, updated_at = now() WHERE lock = $1', [lock]);
      const pruning = pruneOldRecords(new Date(Date.now() - CUTOFF_DAYS * DAY));
      // Retention's DELETE is waiting for the row the bank holds: only now may the bank commit.
      await untilSomeoneWaitsOn(bank, 2_500);
      await bank.query('COMMIT');
      await pruning;
    } finally {
      await bank.end();
    }
    expect(await getDb().bankFence.findUnique({ where: { lock }, select: { token: true } })).toEqual({ token: 2n });
  });
});
