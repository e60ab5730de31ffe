// Names and colours of the defences, shared by the checkout, the lab and the timeline (pure, browser-safe).
import { DEFAULT_LEASE_MS } from './constants.ts';
import type { KeyStrategy, LabSettings } from './settings.ts';
import type { TimelineStep } from './timeline-event.ts';

export type Switch = 'pendingUi' | 'token' | 'requestKey' | 'stateMachine' | 'uniqueConstraint' | 'bankKey';

export const SWITCHES: Array<{ key: Switch; number: number; name: string; what: string }> = [
  { key: 'pendingUi', number: 0, name: 'Pending UI', what: 'The Pay button is disabled while a payment is in flight.' },
  {
    key: 'token',
    number: 1,
    name: 'One-time token',
    what: 'Issued when the page loads; consumed once by a Lua compare-and-delete.',
  },
  {
    key: 'requestKey',
    number: 2,
    name: 'Request key',
    what: 'Claimed in Redis (Lua, a lease, a fencing token); the first outcome is stored and replayed.',
  },
  {
    key: 'stateMachine',
    number: 3,
    name: 'State machine',
    what: 'UPDATE … WHERE status = PENDING: one row means this request won.',
  },
  {
    key: 'uniqueConstraint',
    number: 4,
    name: 'Unique constraint',
    what: 'A dedup row (PAYMENT, order no) with a unique key, same transaction.',
  },
  {
    key: 'bankKey',
    number: 5,
    name: 'Bank key',
    what: 'The bank’s own idempotency key (pay:order no): the bank returns its first charge.',
  },
];

/** One sentence per strategy: the lab's explanation. */
export const KEY_STRATEGY_INFO: Record<KeyStrategy, { name: string; explains: string }> = {
  business: {
    name: 'Business identity',
    explains:
      'The key is the order number (or the caller’s Idempotency-Key): every retry of one intent carries the same key.',
  },
  paramHash: {
    name: 'Hash of the parameters',
    explains:
      'The server hashes the submitted form, which carries the submit’s timestamp: every new submit hashes to a new key.',
  },
  perSubmit: {
    name: 'New key per submit',
    explains:
      'A random key is minted at each submit and never kept: a refresh or a second click is a stranger to layer 2.',
  },
};

const STEP_NAMES: Record<TimelineStep, string> = {
  request: 'Request',
  pendingUi: '0 Pending UI',
  token: '1 Token',
  requestKey: '2 Request key',
  stateMachine: '3 State machine',
  uniqueConstraint: '4 Unique constraint',
  bankKey: '5 Bank key',
  bank: 'Bank',
  reconcile: 'Reconciler',
  outcome: 'Outcome',
  gateway: 'Gateway',
  receipt: 'Receipt',
  redis: 'Redis',
};

export function stepName(step: TimelineStep): string {
  return STEP_NAMES[step];
}

/** The CSS colour variable of a layer or step (globals.css). */
export function colourOf(step: TimelineStep | Switch): string {
  switch (step) {
    case 'pendingUi':
    case 'token':
    case 'requestKey':
    case 'stateMachine':
    case 'uniqueConstraint':
    case 'bankKey':
      return `var(--layer-${step})`;
    default:
      return 'var(--layer-bank)';
  }
}

/** "Answered by" in words: a layer's name, or the bank / the reconciler. */
export function answererName(answeredBy: string): string {
  const layer = SWITCHES.find((s) => s.key === answeredBy);
  if (layer) return `layer ${layer.number}, ${layer.name.toLowerCase()}`;
  return answeredBy === 'reconciler' ? 'the reconciler (it asked the bank)' : 'the bank';
}

/**
 * The faults that are on, each in a few words (the checkout's chips, the lab's summary): what an attendee
 * must know is rigged before reading the outcome. Empty when the bank and the app behave.
 */
export function activeFaults(settings: Pick<LabSettings, 'faults' | 'claims'>): string[] {
  const { faults } = settings;
  const ms = (value: number) => `${value.toLocaleString('en-GB')} ms`;
  return [
    faults.bankLatencyMs > 0 ? `bank latency ${ms(faults.bankLatencyMs)}` : '',
    faults.bankFailure === 'decline' ? 'the bank declines the card' : '',
    faults.bankFailure === 'error' ? 'bank error before charging' : '',
    faults.bankTimeoutAfterCharge ? 'charge, then time out' : '',
    faults.bankLateChargeMs > 0 ? `late charge ${ms(faults.bankLateChargeMs)}` : '',
    faults.stallBeforeBankMs > 0 ? `pause before the bank ${ms(faults.stallBeforeBankMs)}` : '',
    faults.crashBeforeCharge ? 'crash before the charge' : '',
    faults.crashAfterCharge ? 'crash after the charge' : '',
    faults.receiptCrashBeforeAck ? 'receipt consumer dies before its ack' : '',
    faults.dropResponse ? 'the answer is dropped' : '',
    settings.claims.leaseMs !== DEFAULT_LEASE_MS ? `lease ${ms(settings.claims.leaseMs)}` : '',
  ].filter(Boolean);
}
