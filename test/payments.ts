// Helpers for the integration tests of the payment pipeline (real PostgreSQL and Redis).
import { Cluster } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { getDb } from '@/lib/db';
import type { RaceHook, RacePoint } from '@/lib/defences/race-points';
import type { LabSettingsPatch } from '@/lib/lab/settings';
import { createOrder } from '@/lib/payments/orders';
import { defaultPayOptions, type PayOptions } from '@/lib/payments/pay';
import { type PolicySource, policySource, setPolicySource } from '@/lib/payments/policy';
import { getRedis } from '@/lib/redis';

export { ALL_LAYERS_OFF as ALL_OFF, ALL_LAYERS_ON as ALL_ON, onlyLayers as only } from '@/lib/lab/settings';

export async function newOrder(lab: LabSettingsPatch, amountCents = 4_200): Promise<string> {
  return (await createOrder({ amountCents, lab })).orderNo;
}

/** Changes an order's own lab settings mid-test (say, the bank recovers). */
export async function setOrderLab(orderNo: string, lab: LabSettingsPatch): Promise<void> {
  await getDb().order.update({ where: { orderNo }, data: { lab } });
}

/** What the card network recorded for the order: the number the customer cares about. */
export async function chargeCount(orderNo: string): Promise<number> {
  return getDb().bankCharge.count({ where: { merchantRef: orderNo } });
}

export async function orderRow(orderNo: string) {
  return getDb().order.findUniqueOrThrow({ where: { orderNo } });
}

/** The process "dies" here: the pipeline must not run another line of its own after it. */
export class SimulatedCrash extends Error {}

/** The lab's crash faults in a test's process: the attempt throws where the process would have died. */
export const simulatedCrash = (): never => {
  throw new SimulatedCrash('a lab crash fault');
};

export function testPayOptions(overrides: Partial<PayOptions> = {}): PayOptions {
  return { ...defaultPayOptions(), ...overrides };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An attempt held at one of the pipeline's named points until released: `at` for its options (`then` runs first at
 * every point, to move a test's clock, say), `reached` once it waits there. Held at a point, not for a time, so that
 * a busy machine cannot wake it first.
 */
export function holdAt(
  point: RacePoint,
  then: (point: RacePoint) => void = () => {},
): { at: RaceHook; reached: Promise<void>; release: () => void } {
  let arrive = () => {};
  const reached = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const at: RaceHook = async (here) => {
    then(here);
    if (here !== point) return;
    arrive();
    await released;
  };
  return { at, reached, release };
}

/**
 * An attempt (`run`, given a clock moved by hand from now and its race hook) held before the bank, then woken past
 * half its lease (a 1 s lease: 600 ms), so that it renews its claims; `then` runs at every point it passes, and may
 * throw there as a failing store would. Returns what it comes to, and the clock, for the retries after it.
 */
export async function awayPastHalfLease<T>(
  run: (options: { now: () => number; at: RaceHook }) => Promise<T>,
  then: (point: RacePoint) => void,
): Promise<{ settled: Promise<T>; now: () => number }> {
  const start = Date.now();
  let clock = start;
  const now = () => clock;
  const hold = holdAt('pay.beforeBank', then);
  const settled = run({ now, at: hold.at });
  await hold.reached;
  clock = start + 600;
  hold.release();
  return { settled, now };
}

/**
 * Redis loses its memory. One server: this worker's own logical database (test/integration-setup.ts). A Redis
 * Cluster has database 0 alone: every primary is emptied, which is why its run has one worker (scripts/test.ts).
 */
export async function forgetEverythingInRedis(): Promise<void> {
  const redis = getRedis();
  if (redis instanceof Cluster) await Promise.all(redis.nodes('master').map((node) => node.flushdb()));
  else await redis.flushdb();
}

/**
 * The lab off for the calling file's tests: the default policy, which holds for every order (the file's worker
 * alone), and the lab's policy source back after them.
 */
export function withTheLabOff(): void {
  let lab: PolicySource;
  beforeAll(() => {
    lab = policySource();
    setPolicySource(undefined);
  });
  afterAll(() => setPolicySource(lab));
}
