// The background workers: the outbox relay (outbox rows → Redis stream) and the "send receipt" consumer
// (stream → receipts, idempotent by the dedup table), as `worker.ts receipts`; the refund worker (a back office's
// refunds as stream messages, each carrying its request id: a redelivery is answered with the first outcome), as
// `worker.ts refunds`. `npm run demo` and `npm run demo:cluster` start one process of each. Started and supervised by `npm run demo` and
// `npm run demo:cluster`; several may run at once (SKIP LOCKED, one consumer group).
import { hostname } from 'node:os';
import { getDb } from '../lib/db.ts';
import { consumeReceipts, ensureReceiptsGroup } from '../lib/events/receipts.ts';
import { relayOutbox } from '../lib/events/relay.ts';
import { flushLab, registerLab } from '../lib/lab/register.ts';
import { getOrderLabSettings } from '../lib/lab/settings-store.ts';
import { connectRedis, getRedis, redisTargetFromEnv } from '../lib/redis.ts';
import { consumeRefunds, ensureRefundsGroup } from '../lib/refunds/worker.ts';

registerLab();
const consumer = `receipts-${hostname().slice(0, 20)}-${process.pid}`;
let stopping = false;

async function relayLoop(): Promise<void> {
  while (!stopping) {
    const published = await relayOutbox().catch((error: Error) => {
      console.error(`[worker] relay: ${error.message}`);
      return 0;
    });
    if (published === 0) await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function consumeLoop(): Promise<void> {
  await ensureReceiptsGroup();
  while (!stopping) {
    await consumeReceipts(consumer, {
      // The lab's fault: die after the receipt went out and before the ack, so the message is redelivered.
      // Read as the payment reads its settings: the order owner's lab, then the order's own. When the room is
      // exposed, only the presenter may switch it on (it stops the worker for everybody).
      beforeAck: async (orderNo, result) => {
        if (result !== 'sent') return;
        if ((await getOrderLabSettings(orderNo))?.faults.receiptCrashBeforeAck) {
          console.error(`[worker] ${consumer}: dying before the ack of ${orderNo}'s receipt (lab fault)`);
          await flushLab(); // the lab hears of the delivery first
          process.kill(process.pid, 'SIGKILL');
        }
      },
    }).catch(async (error: Error) => {
      console.error(`[worker] consumer: ${error.message}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    });
  }
}

async function refundLoop(): Promise<void> {
  await ensureRefundsGroup();
  // A connection of its own for the blocking read: the receipts' consumer and the relay share the other one.
  const redis = connectRedis(redisTargetFromEnv());
  redis.on('error', (error: Error) => console.error(`[worker] refunds' redis: ${error.message}`));
  while (!stopping) {
    await consumeRefunds(consumer.replace('receipts-', 'refunds-'), { redis }).catch(async (error: Error) => {
      console.error(`[worker] refunds: ${error.message}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    });
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping = true;
    setTimeout(() => {
      void getRedis().quit();
      void getDb().$disconnect();
      process.exit(0);
    }, 200);
  });
}
// `worker.ts receipts` (the relay and the receipts), `worker.ts refunds`, or both when no role is named.
const role = process.argv[2];
if (role !== 'refunds') {
  console.log(`[worker] ${consumer}: relaying the outbox and sending receipts`);
  void relayLoop();
  void consumeLoop();
}
if (role !== 'receipts') {
  console.log(`[worker] ${consumer.replace('receipts-', 'refunds-')}: making queued refunds`);
  void refundLoop();
}
