// The lab's switches: which defences are on and which faults the simulated bank injects. Pure: the
// schemas and the merge live here, the storage (Redis, shared by every app instance) in settings-store.ts.
import { z } from 'zod';

import {
  ALL_LAYERS_ON as DEFAULTS_ON,
  DUPLICATE_ANSWERS,
  type DuplicateAnswer,
  KEY_STRATEGIES,
  type KeyStrategy,
  REFUND_KEY_STRATEGIES,
  RELEASE_RULES,
  type RefundKeyStrategy,
  type ReleaseRule,
} from '../defences/layers.ts';
import { BANK_SETTLEMENT_WINDOW_MS, DEFAULT_LEASE_MS } from './constants.ts';

export { LAYERS, type Layer } from '../defences/layers.ts';
export {
  BANK_SETTLEMENT_WINDOW_MS,
  DEFAULT_LEASE_MS,
  DUPLICATE_ANSWERS,
  type DuplicateAnswer,
  KEY_STRATEGIES,
  type KeyStrategy,
  REFUND_KEY_STRATEGIES,
  RELEASE_RULES,
  type RefundKeyStrategy,
  type ReleaseRule,
};

export const LayersSchema = z.strictObject({
  /** Layer 0, in the browser: the Pay button is disabled while a payment is in flight. */
  pendingUi: z.boolean(),
  /** Layer 1: a one-time checkout token, issued on page load and consumed by a Lua compare-and-delete. */
  token: z.boolean(),
  /** Layer 2: the request key, claimed in Redis by a Lua script, with a lease; the outcome is stored and replayed. */
  requestKey: z.boolean(),
  /** Layer 3: the payment state machine, moved only by conditional updates. */
  stateMachine: z.boolean(),
  /** Layer 4: the dedup table's unique key (biz_type, biz_no), in the same transaction. */
  uniqueConstraint: z.boolean(),
  /** Layer 5: the bank's own idempotency key, derived from the order; the bank returns its first charge. */
  bankKey: z.boolean(),
});

export const FaultsSchema = z.strictObject({
  /** How long the bank takes to answer, after it has recorded the charge. */
  bankLatencyMs: z.number().int().min(0).max(60_000),
  /** The bank fails before charging: "decline" (final) or "error" (nothing moved, retry allowed). */
  bankFailure: z.enum(['none', 'decline', 'error']),
  /** The bank records the charge, then the call times out: the merchant does not know the outcome. */
  bankTimeoutAfterCharge: z.boolean(),
  /** The merchant's process dies right after the bank charged the card, before recording anything. */
  crashAfterCharge: z.boolean(),
  /**
   * The attempt pauses after its claim and before the bank (a GC pause, an overloaded host), for this long.
   * Past the claim's lease, another attempt may take the claim over: the fence must stop this one.
   */
  stallBeforeBankMs: z.number().int().min(0).max(60_000),
  /**
   * The merchant's call times out before the bank charges, and the charge lands this many ms later, as a
   * real processor may still execute a request its caller gave up on. At most the settlement window.
   */
  bankLateChargeMs: z.number().int().min(0).max(BANK_SETTLEMENT_WINDOW_MS),
  /** The merchant's process dies holding its claims, before the bank is called: nothing charged. */
  crashBeforeCharge: z.boolean(),
  /**
   * The bank answers, then the synchronous notification of a downstream system (the order service) throws:
   * the request fails although the card was charged (the article's example for its third detail).
   */
  notifyFailsAfterCharge: z.boolean(),
  /** The "send receipt" consumer dies after sending a receipt and before acknowledging the message. */
  receiptCrashBeforeAck: z.boolean(),
  /**
   * The checkout's first answer for an order is lost on its way back: the payment completes on the server,
   * and the browser never hears of it (the Pay button keeps waiting), as when a phone loses its connection.
   * The retry's answer arrives. Checkout only.
   */
  dropResponse: z.boolean(),
});

/**
 * What each fault reaches: `attempt`, the payment's own attempt (its bank call, its pause, its answer); or
 * `shared`, a process every attendee's payments run in (the receipt worker), which it stops for everybody.
 * When the room is exposed, only the presenter may switch a shared one on. The app's two crashes reach the
 * attempt: on loopback (one person's demo) they kill the app's process, and in a room those of an attendee's
 * own lab or an order's own settings stop that attempt alone, where the process would have died
 * (lib/lab/policy.ts). A Record: a new fault does not compile until it says which.
 */
export const FAULT_REACH: Record<keyof z.infer<typeof FaultsSchema>, 'attempt' | 'shared'> = {
  bankLatencyMs: 'attempt',
  bankFailure: 'attempt',
  bankTimeoutAfterCharge: 'attempt',
  crashAfterCharge: 'attempt',
  stallBeforeBankMs: 'attempt',
  bankLateChargeMs: 'attempt',
  crashBeforeCharge: 'attempt',
  notifyFailsAfterCharge: 'attempt',
  receiptCrashBeforeAck: 'shared',
  dropResponse: 'attempt',
};

/** The faults that stop a shared process: the receipt worker's crash. */
export const SHARED_FAULTS = (Object.keys(FAULT_REACH) as Array<keyof typeof FAULT_REACH>).filter(
  (fault) => FAULT_REACH[fault] === 'shared',
);

/** The cluster's gateway (npm run demo:cluster): how long it waits for an instance, and how often it retries. */
export const GatewaySchema = z.strictObject({
  /** After this long without an answer, the gateway sends the same request to the other instance. */
  timeoutMs: z.number().int().min(100).max(30_000),
  /** How many times it retries (on a timeout or a dead instance), POSTs included, as nginx's `non_idempotent`. */
  retries: z.number().int().min(0).max(3),
});

/**
 * Claims (the request key, the order's PROCESSING state, the dedup row): how long one lives unrenewed, and when
 * one is given back after its attempt failed.
 */
export const ClaimsSchema = z.strictObject({
  /** After this long without a renewal, a claim counts as abandoned and another attempt may take it over. */
  leaseMs: z.number().int().min(100).max(600_000),
  /**
   * noMoneyMoved: given back only when the bank says nothing moved; kept when the outcome is unknown.
   * anyError: given back on any error, a failure after the charge too. never: left until its lease runs out.
   */
  release: z.enum(RELEASE_RULES),
});

export const KeysSchema = z.strictObject({
  /**
   * business: the order number (the browser), or the caller's Idempotency-Key (the API).
   * paramHash: a hash of the submitted parameters, which carry the submit's timestamp.
   * perSubmit: a fresh random key for each submit, never persisted.
   */
  strategy: z.enum(KEY_STRATEGIES),
  /**
   * What a refund's identity is made of. requestId: the id the caller created for the refund and keeps (right).
   * orderNo: the order number (a second legitimate refund is refused). paramHash: a hash of the refund's parameters
   * (two legitimate refunds of one amount merge; a retry stamped anew refunds twice).
   */
  refunds: z.enum(REFUND_KEY_STRATEGIES),
});

export const AnswersSchema = z.strictObject({
  /**
   * firstResult: a duplicate of a finished payment gets the first request's outcome, exactly as it was answered.
   * error: it is told "already submitted" and nothing more (HTTP 409), as a naive implementation does.
   */
  duplicate: z.enum(DUPLICATE_ANSWERS),
});

export const LabSettingsSchema = z.strictObject({
  layers: LayersSchema,
  faults: FaultsSchema,
  claims: ClaimsSchema,
  keys: KeysSchema,
  answers: AnswersSchema,
  gateway: GatewaySchema,
});
export type LabSettings = z.infer<typeof LabSettingsSchema>;
export type Layers = z.infer<typeof LayersSchema>;
export type Faults = z.infer<typeof FaultsSchema>;
export type ClaimSettings = z.infer<typeof ClaimsSchema>;
export type KeySettings = z.infer<typeof KeysSchema>;
export type AnswerSettings = z.infer<typeof AnswersSchema>;
export type GatewaySettings = z.infer<typeof GatewaySchema>;

/** A partial change: what PUT /api/lab/config and an order's own `lab` carry. */
export const LabSettingsPatchSchema = z.strictObject({
  layers: LayersSchema.partial().optional(),
  faults: FaultsSchema.partial().optional(),
  claims: ClaimsSchema.partial().optional(),
  keys: KeysSchema.partial().optional(),
  answers: AnswersSchema.partial().optional(),
  gateway: GatewaySchema.partial().optional(),
});
export type LabSettingsPatch = z.infer<typeof LabSettingsPatchSchema>;

/**
 * All layers on, no faults, the default lease, claims given back only when no money moved, business keys, every
 * duplicate told the first result: what `POST /api/lab/reset` restores.
 */
export const DEFAULT_LAB_SETTINGS: LabSettings = {
  layers: DEFAULTS_ON,
  faults: {
    bankLatencyMs: 0,
    bankFailure: 'none',
    bankTimeoutAfterCharge: false,
    crashAfterCharge: false,
    receiptCrashBeforeAck: false,
    stallBeforeBankMs: 0,
    bankLateChargeMs: 0,
    crashBeforeCharge: false,
    notifyFailsAfterCharge: false,
    dropResponse: false,
  },
  claims: { leaseMs: DEFAULT_LEASE_MS, release: 'noMoneyMoved' },
  keys: { strategy: 'business', refunds: 'requestId' },
  answers: { duplicate: 'firstResult' },
  gateway: { timeoutMs: 2_000, retries: 1 },
};

export const ALL_LAYERS_ON: Layers = DEFAULT_LAB_SETTINGS.layers;
export const ALL_LAYERS_OFF: Layers = {
  pendingUi: false,
  token: false,
  requestKey: false,
  stateMachine: false,
  uniqueConstraint: false,
  bankKey: false,
};

/** These layers on, every other one off: "layer X alone". */
export function onlyLayers(...layers: Array<keyof Layers>): Layers {
  return { ...ALL_LAYERS_OFF, ...Object.fromEntries(layers.map((layer) => [layer, true])) };
}

export function mergeLabSettings(base: LabSettings, patch: LabSettingsPatch | null | undefined): LabSettings {
  if (!patch) return base;
  return {
    layers: { ...base.layers, ...patch.layers },
    faults: { ...base.faults, ...patch.faults },
    claims: { ...base.claims, ...patch.claims },
    keys: { ...base.keys, ...patch.keys },
    answers: { ...base.answers, ...patch.answers },
    gateway: { ...base.gateway, ...patch.gateway },
  };
}

/** Reads stored settings leniently: whatever is missing or malformed falls back to the defaults. */
export function parseStoredLabSettings(raw: string | null, defaults: LabSettings = DEFAULT_LAB_SETTINGS): LabSettings {
  if (!raw) return defaults;
  try {
    const patch = LabSettingsPatchSchema.safeParse(JSON.parse(raw));
    return patch.success ? mergeLabSettings(defaults, patch.data) : defaults;
  } catch {
    return defaults;
  }
}
