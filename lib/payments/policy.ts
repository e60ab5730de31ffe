import 'server-only';
// What one order's payment runs under, as one value read in one place (pay.ts's orderFor): which defences
// are on, how long a claim lives and when it is given back after a failure, what layer 2's key is made of, the
// simulated bank's faults, what a duplicate is told, and the named fault points where something may strike the
// attempt. Without anyone to say otherwise (a production checkout, LAB_ENABLED=false): every defence on, no
// fault, claims released only when no money moved, duplicates told the first result, the lease
// REQUEST_KEY_LEASE_MS says. The lab
// registers a source of its own (lib/lab/register.ts), so the pipeline never reads the lab: the lab reads it.
import type { DuplicateAnswer, KeyStrategy, Layers, RefundKeyStrategy, ReleaseRule } from '../defences/layers.ts';
import { ALL_LAYERS_ON } from '../defences/layers.ts';
import { env } from '../env.ts';
import type { CallerScope } from '../session.ts';
import type { Span } from '../telemetry/spans.ts';
import { type BankFaults, NO_BANK_FAULTS } from './bank.ts';

/**
 * The points where a fault may strike an attempt: between its claims and the bank, after a charge (a crash), and
 * at the downstream notification after the bank's answer (this checkout notifies through its outbox, so only a
 * fault throws there: the article's "the charge went through, then notifying a downstream system failed").
 */
export type FaultPoint = 'pay.beforeBank' | 'pay.afterCharge' | 'pay.notify';

/** What a fault point knows of the attempt it strikes. */
export type FaultContext = {
  orderNo: string;
  /** The attempt's span: a fault that pauses it says so there. */
  span: Span;
  /** It recovers a stalled or dead attempt's payment (a taker): a pause fault spares it. */
  tookOver: boolean;
  leaseMs: number;
};

/** Runs whatever the fault point holds (a pause, a crash): nothing, unless the lab put something there. */
export type FaultPoints = (point: FaultPoint, at: FaultContext) => Promise<void> | void;

export type PaymentPolicy = {
  layers: Layers;
  /** How long a claim lives unrenewed. */
  leaseMs: number;
  /** What layer 2's key is made of. */
  keyStrategy: KeyStrategy;
  /** What a refund's identity is made of. */
  refundKeyStrategy: RefundKeyStrategy;
  /** When a claim is given back after a failure. */
  release: ReleaseRule;
  /** What a duplicate of a finished payment is told: the first result, or an error. */
  duplicateAnswer: DuplicateAnswer;
  /** The simulated bank's faults for this order. */
  bank: BankFaults;
  faults: FaultPoints;
};

/** An order as its policy is chosen for it: its owner, and the settings it was created with (if any). */
export type OrderRef = { orderNo: string; owner: string | null; lab: unknown };

export type PolicySource = {
  forOrder(order: OrderRef): Promise<PaymentPolicy>;
  /**
   * The policy of this order when this caller pays it, if it can be told without reading the order (no lab:
   * always the default; the lab: its global settings, for a service paying an order whose number says it has no
   * settings of its own), else undefined. With it, an API call that states its amount need not read the order
   * before the defences: the database's claim checks the owner and the amount (pay.ts, `checkAtClaim`).
   */
  forCaller?(caller: CallerScope, orderNo: string): Promise<PaymentPolicy | undefined>;
  /** The lease of an order with no settings of its own (the reconciler's sweep finds dead claims with it). */
  leaseMs(): Promise<number>;
};

const NO_FAULTS: FaultPoints = () => undefined;

/** Every defence on, no fault, business keys, the configured lease. */
export function defaultPolicy(): PaymentPolicy {
  return {
    layers: ALL_LAYERS_ON,
    leaseMs: env().REQUEST_KEY_LEASE_MS,
    keyStrategy: 'business',
    refundKeyStrategy: 'requestId',
    release: 'noMoneyMoved',
    duplicateAnswer: 'firstResult',
    bank: NO_BANK_FAULTS,
    faults: NO_FAULTS,
  };
}

const DEFAULT_SOURCE: PolicySource = {
  forOrder: async () => defaultPolicy(),
  forCaller: async () => defaultPolicy(),
  leaseMs: async () => env().REQUEST_KEY_LEASE_MS,
};

// On globalThis: Next.js bundles instrumentation.ts (where the lab registers) apart from the routes.
const registry = globalThis as unknown as { paymentPolicySource?: PolicySource };

/** The lab (or a test) decides what payments run under from now on. */
export function setPolicySource(source: PolicySource | undefined): void {
  registry.paymentPolicySource = source;
}

export function policySource(): PolicySource {
  return registry.paymentPolicySource ?? DEFAULT_SOURCE;
}
