// The chaos storm's plan (scripts/lib/chaos-storm.ts runs it): its sizes and times, the faults and the
// configurations of the defences it draws from, and the orders it draws, each with one of each, from a seeded
// RNG (the seed is printed, and BENCH_CHAOS_SEED draws the same storm again).
import {
  ALL_LAYERS_OFF,
  ALL_LAYERS_ON,
  DEFAULT_LAB_SETTINGS,
  type Faults,
  type LabSettingsPatch,
  LabSettingsPatchSchema,
  type Layers,
} from '../../../lib/lab/settings.ts';
import { newOrderNo } from '../../../lib/payments/order-no.ts';

/** Orders in the storm (BENCH_CHAOS_ORDERS scales it; the time it takes grows with the crash orders). */
export const CHAOS_ORDERS = Number(process.env.BENCH_CHAOS_ORDERS ?? 150);
/** Callers per order, all at once: a customer's app, its backend, a queue's redelivery, say. */
export const CALLERS = ['chaos-shop-a', 'chaos-shop-b', 'chaos-shop-c'];
/** Short, so that a stalled or dead attempt's claim is taken over within the storm. */
export const LEASE_MS = 1_000;
/** The orders are started evenly over this window; the outages fall inside it. */
export const LAUNCH_MS = 20_000;
export const REDIS_RESTART_AT = 0.3;
export const POSTGRES_RESTART_AT = 0.65;
/** Each server stays down at least this long, and until a payment has met the outage (at most OUTAGE_MAX_MS). */
export const OUTAGE_MS = 1_000;
export const OUTAGE_MAX_MS = 5_000;
/** A caller's own timeout per request; it then retries with the same key. */
export const CLIENT_TIMEOUT_MS = 8_000;
/**
 * A caller gives up this long after its first request: a well-behaved client does not retry forever. What
 * its give-up leaves in doubt, the app's reconciler must settle with nobody asking.
 */
export const CALLER_DEADLINE_MS = 30_000;
/**
 * Every caller has its final answer or has given up by then: a payment's callers within their deadline, its last
 * request and a Retry-After wait, and its refunds' callers (started once the payment is answered) as long again;
 * with room to spare. A storm whose callers are not all done by then is stuck, and the run ends saying who.
 */
export const STORM_DRAIN_MS = LAUNCH_MS + 2 * (CALLER_DEADLINE_MS + CLIENT_TIMEOUT_MS + 30_000);
/** After a refused or dropped connection: 250 ms, doubling up to 2 s (a restarting app is not hammered). */
export const RECONNECT_MS = { first: 250, max: 2_000 };
/** The reconciler runs every 5 s, and "no charge yet" waits for the bank's 10 s settlement window. */
export const SETTLE_TIMEOUT_MS = 60_000;
export const AMOUNT_CENTS = 4_200;
/** The app's name in attempt ids: fixed, so that the restarted app knows its previous life's claims. */
export const INSTANCE_NAME = 'bench-chaos';
export const NO_FAULTS: Faults = DEFAULT_LAB_SETTINGS.faults;

export const FAULT_KINDS = [
  'none',
  'stall',
  'lateCharge',
  'timeoutAfterCharge',
  'crashBeforeCharge',
  'crashAfterCharge',
  'crashTaker',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** How often each fault is drawn. The crashes are few: each one costs a restart of the app. */
export const FAULT_WEIGHTS: Record<FaultKind, number> = {
  none: 0.26,
  stall: 0.2,
  lateCharge: 0.2,
  timeoutAfterCharge: 0.23,
  crashBeforeCharge: 0.03,
  crashAfterCharge: 0.04,
  crashTaker: 0.04,
};

/**
 * The configurations of the defences an order runs under, and how often each is drawn: every one the proof
 * matrix declares safe from a second charge for callers with keys of their own (layer 3, 4 or 5 on).
 */
export const CONFIGURATIONS = {
  'all on': { weight: 0.3, layers: ALL_LAYERS_ON },
  'all on but 5': { weight: 0.2, layers: { ...ALL_LAYERS_ON, bankKey: false } },
  '3 alone': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, stateMachine: true } },
  '4 alone': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, uniqueConstraint: true } },
  '5 alone': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, bankKey: true } },
  '3+4': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, stateMachine: true, uniqueConstraint: true } },
  '2+4': { weight: 0.1, layers: { ...ALL_LAYERS_OFF, requestKey: true, uniqueConstraint: true } },
} satisfies Record<string, { weight: number; layers: Layers }>;
export type ConfigurationName = keyof typeof CONFIGURATIONS;
export const CONFIGURATION_NAMES = Object.keys(CONFIGURATIONS) as ConfigurationName[];

/** Moments (shares of the launch window) at which the app is killed whatever it is doing. */
export const KILLS_AT = [0.25, 0.75];
/**
 * Where no database layer is on, nothing in PostgreSQL says an order was claimed (its fencing token never rises):
 * its fault is taken off this long after its first request was sent, by when that request has read it.
 */
export const UNCLAIMED_FAULT_MS = 300;

/** What each fault does, for the report. */
export const FAULT_NAMES: Record<FaultKind, string> = {
  none: 'none',
  stall: 'the attempt stalls 1.5-2.5 s, past its lease, between its claim and the bank',
  lateCharge: 'the call times out before the bank charges; the charge lands 0.5-3 s later',
  timeoutAfterCharge: 'the bank charges, then the call times out',
  crashBeforeCharge: 'the app is killed (SIGKILL) holding its claims, before the charge',
  crashAfterCharge: 'the app is killed (SIGKILL) after the charge, before recording it',
  crashTaker: 'the app is killed holding its claims before the charge, and again when its first taker is about to pay',
};

/**
 * The refunds the storm asks for on an order once it is PAID (the orders drawn for them: REFUND_SHARE, from a draw of
 * its own, so that a seed's payments are the same with or without them): one refund that two operators send at once
 * with its one request id, a second legitimate refund of the same amount, and a third that with both would pass the
 * charge ($5 + $5 + $35 > $42): whichever comes last of them, the ledger refuses. Each caller retries with its
 * request id as the payments' callers do; the refunds meet the same outages and kills, with no fault of their own.
 */
export const REFUND_INTENTS = [
  { id: 'a', amountCents: 500, callers: ['chaos-ops-1', 'chaos-ops-2'] },
  { id: 'b', amountCents: 500, callers: ['chaos-ops-3'] },
  { id: 'c', amountCents: 3_500, callers: ['chaos-ops-4'] },
] as const;
export const REFUND_SHARE = Number(process.env.BENCH_CHAOS_REFUND_SHARE ?? 0.5);

/** The orders whose refunds the storm asks for once paid: a share of the plan, from the refunds' own draw. */
export function planRefunds(random: () => number, plan: PlannedOrder[]): Set<string> {
  return new Set(plan.filter(() => random() < REFUND_SHARE).map((order) => order.orderNo));
}

export type PlannedOrder = {
  orderNo: string;
  fault: FaultKind;
  faults: Partial<Faults>;
  configuration: ConfigurationName;
};

/** A small seeded generator (mulberry32): the same seed draws the same faults. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
export const between = (random: () => number, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

export function pickFault(random: () => number): FaultKind {
  let draw = random();
  for (const kind of FAULT_KINDS) {
    draw -= FAULT_WEIGHTS[kind];
    if (draw < 0) return kind;
  }
  return 'none';
}

export function faultsFor(kind: FaultKind, random: () => number): Partial<Faults> {
  switch (kind) {
    case 'none':
      return {};
    case 'stall':
      return { stallBeforeBankMs: between(random, 1_500, 2_500) };
    case 'lateCharge':
      return { bankLateChargeMs: between(random, 500, 3_000) };
    case 'timeoutAfterCharge':
      return { bankTimeoutAfterCharge: true };
    case 'crashBeforeCharge':
    case 'crashTaker':
      return { crashBeforeCharge: true };
    case 'crashAfterCharge':
      return { crashAfterCharge: true };
  }
}

export function pickConfiguration(random: () => number): ConfigurationName {
  let draw = random();
  for (const name of CONFIGURATION_NAMES) {
    draw -= CONFIGURATIONS[name].weight;
    if (draw < 0) return name;
  }
  return 'all on';
}

export function planOrders(random: () => number, count: number): PlannedOrder[] {
  return Array.from({ length: count }, () => {
    const fault = pickFault(random);
    const faults = faultsFor(fault, random);
    return { orderNo: newOrderNo(true), fault, faults, configuration: pickConfiguration(random) };
  });
}

/**
 * The order's own settings, every layer and every fault given: the global settings live in Redis, which the
 * storm restarts empty, so nothing is left to inherit. Checked with the app's own schema, because the app
 * ignores an order's settings that do not parse (and would run the order with the global ones, silently).
 */
export function labOf(order: PlannedOrder): LabSettingsPatch {
  return LabSettingsPatchSchema.parse({
    layers: CONFIGURATIONS[order.configuration].layers,
    faults: { ...NO_FAULTS, ...order.faults },
    claims: { leaseMs: LEASE_MS },
  });
}
