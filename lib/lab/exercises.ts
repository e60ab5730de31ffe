// The workshop's exercises (docs/workshop.md), as data: for each one, exactly the lab it is played in
// (its preset), the switch that fixes it, and the matrix scenarios that prove it. The lab's "Set up
// exercise N", the /scenarios page, the guide's links and the exercise tests all read this list, so an
// exercise is set up the same way wherever it is named. Pure and browser-safe.
import {
  DEFAULT_LAB_SETTINGS,
  type LabSettings,
  type LabSettingsPatch,
  type Layers,
  mergeLabSettings,
  onlyLayers,
} from './settings.ts';

export type Exercise = {
  /** "1" … "15"; an exercise in parts has one preset per part: "8a", "8b", "8c". */
  id: string;
  /** The guide's heading anchor (docs/workshop.md#…). */
  anchor: string;
  title: string;
  /** The lab of the "Break it" step, over the defaults (every layer on, no faults): nothing is left implicit. */
  preset: LabSettingsPatch;
  /** The "Fix it" step: the switches to turn on (or off) after watching it break, where there is one. */
  fix?: Partial<Layers>;
  /** The rows of the proof matrix (scenario ids) that prove this exercise. */
  scenarios: string[];
  /**
   * Who plays it in a room: an attendee in their browser, with their own lab; an attendee in a terminal (curl
   * against the room's app, as `$ME`); or the presenter, on the projector (it needs the repository, Chromium, or
   * the cluster). The guide says it under each heading (a test compares).
   */
  audience: Audience;
};

export type Audience = 'browser' | 'terminal' | 'presenter';

/** Who plays each numbered section of the guide: an exercise in parts is played by one audience. */
const AUDIENCE: Record<string, Audience> = {
  '1': 'browser',
  '2': 'browser',
  '3': 'browser',
  '4': 'browser',
  '5': 'browser',
  '6': 'presenter',
  '7': 'terminal',
  '8': 'browser',
  '9': 'presenter',
  '10': 'presenter',
  '11': 'browser',
  '12': 'browser',
  '13': 'browser',
  '14': 'browser',
  '15': 'browser',
};

/** The guide's section of an exercise: "8" for "8b". */
export const sectionOf = (id: string): string => id.replace(/[a-z]+$/, '');

const latency = (bankLatencyMs: number) => ({ bankLatencyMs });

const LISTED: Array<Omit<Exercise, 'audience'>> = [
  {
    id: '1',
    anchor: '1-the-double-click-layer-0-the-pending-ui',
    title: 'The double click',
    preset: { layers: onlyLayers(), faults: latency(1_500) },
    fix: { pendingUi: true },
    scenarios: ['double-click', 'double-enter'],
  },
  {
    id: '2',
    anchor: '2-the-one-time-token-layer-1',
    title: 'The one-time token',
    preset: { layers: onlyLayers('token'), faults: latency(1_500) },
    scenarios: ['back-button'],
  },
  {
    id: '3',
    anchor: '3-the-refresh-during-a-stall-layer-1-misses-layer-2-catches',
    title: 'The refresh during a stall',
    preset: { layers: onlyLayers('token'), faults: latency(3_000) },
    fix: { requestKey: true },
    scenarios: ['refresh'],
  },
  {
    id: '4',
    anchor: '4-the-lost-response-result-idempotency',
    title: 'The lost response',
    preset: { layers: onlyLayers('token'), faults: { dropResponse: true } },
    fix: { requestKey: true },
    scenarios: ['lost-response'],
  },
  {
    id: '5',
    anchor: '5-two-tabs-two-sessions-layer-3-the-state-machine',
    title: 'Two tabs, two sessions',
    preset: { layers: onlyLayers('pendingUi', 'token', 'requestKey'), faults: latency(1_500) },
    fix: { stateMachine: true },
    scenarios: ['two-tabs'],
  },
  {
    id: '6',
    anchor: '6-the-last-millimetre-layer-4-the-unique-constraint',
    title: 'The last millimetre',
    preset: { layers: onlyLayers('uniqueConstraint'), faults: latency(1_500) },
    scenarios: ['burst', 'two-tabs'],
  },
  {
    id: '7',
    anchor: '7-service-to-service-retries-the-idempotency-key',
    title: 'Service-to-service retries',
    preset: { faults: latency(1_500) },
    scenarios: ['client-retry'],
  },
  {
    id: '8a',
    anchor: '8-when-to-release-the-claim-the-third-detail',
    title: 'When to release the claim: the bank fails before charging',
    preset: { faults: { bankFailure: 'error' } },
    scenarios: [],
  },
  {
    id: '8b',
    anchor: '8-when-to-release-the-claim-the-third-detail',
    title: 'When to release the claim: the app dies after the charge',
    preset: { faults: { crashAfterCharge: true } },
    scenarios: [],
  },
  {
    id: '8c',
    anchor: '8-when-to-release-the-claim-the-third-detail',
    title: 'When to release the claim: the bank’s answer is lost',
    preset: { faults: { bankTimeoutAfterCharge: true } },
    scenarios: ['late-charge'],
  },
  {
    id: '9',
    anchor: '9-tokens-that-should-not-work',
    title: 'Tokens that should not work',
    preset: { layers: onlyLayers('token') },
    scenarios: ['expired-token', 'foreign-token'],
  },
  {
    id: '10',
    anchor: '10-machines-retry-too-the-gateway-a-killed-instance-a-queue',
    title: 'Machines retry too',
    preset: { faults: latency(3_000) },
    scenarios: ['gateway-retry', 'failover', 'queue-redelivery'],
  },
  {
    id: '11a',
    anchor: '11-claims-die-a-pause-past-the-lease-a-charge-that-lands-late-fencing-layer-5',
    title: 'Claims die: a pause past the lease',
    preset: { layers: onlyLayers('stateMachine'), faults: { stallBeforeBankMs: 2_500 }, claims: { leaseMs: 1_000 } },
    scenarios: ['stall-takeover', 'dead-claim'],
  },
  {
    id: '11b',
    anchor: '11-claims-die-a-pause-past-the-lease-a-charge-that-lands-late-fencing-layer-5',
    title: 'Claims die: a charge that lands late',
    preset: { layers: onlyLayers('stateMachine'), faults: { bankLateChargeMs: 1_500 } },
    fix: { bankKey: true },
    scenarios: ['late-charge'],
  },
  {
    id: '12',
    anchor: '12-the-wrong-key-the-first-detail-what-layer-2s-key-is-made-of',
    title: 'The wrong key',
    preset: { layers: onlyLayers('requestKey'), faults: latency(1_500), keys: { strategy: 'paramHash' } },
    scenarios: ['double-click', 'refresh', 'client-resend'],
  },
  {
    id: '13a',
    anchor: '13-the-wrong-release-rule-the-third-detail-when-a-claim-is-given-back',
    title: 'The wrong release rule: given back on any error',
    preset: {
      layers: { bankKey: false },
      faults: { notifyFailsAfterCharge: true },
      claims: { release: 'anyError' },
    },
    scenarios: ['notify-fails', 'unknown-outcome'],
  },
  {
    id: '13b',
    anchor: '13-the-wrong-release-rule-the-third-detail-when-a-claim-is-given-back',
    title: 'The wrong release rule: never given back',
    preset: {
      layers: { bankKey: false },
      faults: { bankFailure: 'error' },
      claims: { release: 'never', leaseMs: 10_000 },
    },
    scenarios: ['bank-error'],
  },
  {
    id: '14',
    anchor: '14-the-wrong-answer-the-second-detail-what-a-duplicate-is-told',
    title: 'The wrong answer: a duplicate told an error',
    preset: { faults: { dropResponse: true }, answers: { duplicate: 'error' } },
    scenarios: ['client-undici', 'client-got', 'client-ky', 'client-axios', 'client-fetch'],
  },
  {
    id: '15',
    anchor: '15-refunds-the-order-number-is-the-wrong-key-the-first-details-second-half',
    title: 'Refunds: the order number is the wrong key',
    // The pending UI off: a double click on the refund form sends both submits, as a form without it does.
    preset: { layers: { pendingUi: false }, keys: { refunds: 'orderNo' } },
    scenarios: ['refund-two-partial', 'refund-double-click'],
  },
];

export const EXERCISES: Exercise[] = LISTED.map((exercise) => ({
  ...exercise,
  audience: AUDIENCE[sectionOf(exercise.id)] ?? 'presenter',
}));

/** The whole lab of an exercise: its preset over the defaults. Applied as a whole, so nothing earlier lingers. */
export function exerciseSettings(exercise: Exercise): LabSettings {
  return mergeLabSettings(DEFAULT_LAB_SETTINGS, exercise.preset);
}

export function findExercise(id: string): Exercise | undefined {
  return EXERCISES.find((exercise) => exercise.id === id.toLowerCase());
}

/** The exercises a matrix row is played in. */
export function exercisesOf(scenarioId: string): Exercise[] {
  return EXERCISES.filter((exercise) => exercise.scenarios.includes(scenarioId));
}

/** The exercise whose preset the settings are exactly, if any: the lab says which one is set up. */
export function exerciseMatching(settings: LabSettings): Exercise | undefined {
  const same = (a: object, b: object) =>
    Object.entries(a).every(([key, value]) => (b as Record<string, unknown>)[key] === value);
  return EXERCISES.find((exercise) => {
    const preset = exerciseSettings(exercise);
    return (['layers', 'faults', 'claims', 'keys', 'answers'] as const).every((part) =>
      same(preset[part], settings[part]),
    );
  });
}

const LAYER_WORDS: Record<keyof Layers, string> = {
  pendingUi: 'Pending UI',
  token: 'One-time token',
  requestKey: 'Request key',
  stateMachine: 'State machine',
  uniqueConstraint: 'Unique constraint',
  bankKey: 'Bank key',
};

/**
 * The preset in words, as the guide prints it under each exercise (a test compares the two, so the guide
 * cannot drift from what the button applies): the layers on, then every fault and setting off the defaults.
 */
export function describePreset(exercise: Exercise): string {
  const settings = exerciseSettings(exercise);
  const layers = Object.entries(settings.layers) as Array<[keyof Layers, boolean]>;
  const on = layers.filter(([, value]) => value).map(([layer]) => LAYER_WORDS[layer]);
  const defences =
    on.length === layers.length
      ? 'every defence on'
      : on.length === 0
        ? 'every defence off'
        : `only ${on.map((name) => `_${name}_`).join(', ')} on`;
  const ms = (value: number) => `${value.toLocaleString('en-GB')} ms`;
  const { faults } = settings;
  const rest = [
    faults.bankLatencyMs > 0 ? `bank latency ${ms(faults.bankLatencyMs)}` : '',
    faults.bankFailure !== 'none' ? `_Fail before charging_: ${faults.bankFailure}` : '',
    faults.bankTimeoutAfterCharge ? '_Charge, then time out_' : '',
    faults.bankLateChargeMs > 0 ? `_Late charge_ ${ms(faults.bankLateChargeMs)}` : '',
    faults.stallBeforeBankMs > 0 ? `_Pause between the claim and the bank_ ${ms(faults.stallBeforeBankMs)}` : '',
    faults.crashBeforeCharge ? '_Crash … before the bank_' : '',
    faults.crashAfterCharge ? '_Crash the app right after the charge_' : '',
    faults.receiptCrashBeforeAck ? '_The receipt consumer dies after sending a receipt, before its ack_' : '',
    faults.dropResponse ? '_Drop the checkout’s answer_' : '',
    faults.notifyFailsAfterCharge ? '_Notify a downstream system after the charge, and it fails_' : '',
    settings.claims.leaseMs !== DEFAULT_LAB_SETTINGS.claims.leaseMs ? `_Lease_ ${ms(settings.claims.leaseMs)}` : '',
    settings.keys.strategy !== 'business' ? `_Layer 2’s key_: ${settings.keys.strategy}` : '',
    settings.keys.refunds !== 'requestId' ? `_A refund’s key_: ${settings.keys.refunds}` : '',
    settings.claims.release !== 'noMoneyMoved' ? `_Given back after a failure_: ${settings.claims.release}` : '',
    settings.answers.duplicate !== 'firstResult' ? `_What a duplicate is told_: ${settings.answers.duplicate}` : '',
  ].filter(Boolean);
  return [defences, ...rest].join(', ');
}
