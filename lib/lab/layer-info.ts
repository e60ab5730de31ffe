// Names and colours of the defences, shared by the checkout, the lab and the timeline (pure, browser-safe).
import english from '../../messages/en/layers.json' with { type: 'json' };
import { DEFAULT_LEASE_MS } from './constants.ts';
import type { KeyStrategy, LabSettings } from './settings.ts';
import type { TimelineStep } from './timeline-event.ts';

export type Switch = 'pendingUi' | 'token' | 'requestKey' | 'stateMachine' | 'uniqueConstraint' | 'bankKey';

/** English: the reference language (messages/en/layers.json); the pages ask next-intl for the reader's. */
const { names, what, steps, keyStrategies, answerer } = english;

const NUMBERS: Record<Switch, number> = {
  pendingUi: 0,
  token: 1,
  requestKey: 2,
  stateMachine: 3,
  uniqueConstraint: 4,
  bankKey: 5,
};

/** The switches in the order a request meets them; `name` and `what` in English (the pages translate the key). */
export const SWITCHES: Array<{ key: Switch; number: number; name: string; what: string }> = (
  Object.keys(NUMBERS) as Switch[]
).map((key) => ({ key, number: NUMBERS[key], name: names[key], what: what[key] }));

/** One sentence per strategy: the lab's explanation (English; messages layers.keyStrategies). */
export const KEY_STRATEGY_INFO: Record<KeyStrategy, { name: string; explains: string }> = keyStrategies;

export function stepName(step: TimelineStep): string {
  return steps[step];
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

/** "Answered by" as a message of layers.answerer: a layer's number and name, or the bank / the reconciler. */
export function answererOf(
  answeredBy: string,
): { key: 'layer'; values: { number: number; layer: Switch } } | { key: 'reconciler' | 'bank' } {
  const layer = SWITCHES.find((s) => s.key === answeredBy);
  if (layer) return { key: 'layer', values: { number: layer.number, layer: layer.key } };
  return { key: answeredBy === 'reconciler' ? 'reconciler' : 'bank' };
}

/** "Answered by" in English words. */
export function answererName(answeredBy: string): string {
  const who = answererOf(answeredBy);
  return who.key === 'layer'
    ? answerer.layer
        .replace('{number}', String(who.values.number))
        .replace('{name}', names[who.values.layer].toLowerCase())
    : answerer[who.key];
}

export type FaultChip = keyof typeof english.faults;

/**
 * The faults that are on, each a message of layers.faults (the checkout's chips, the lab's summary): what an
 * attendee must know is rigged before reading the outcome. Empty when the bank and the app behave.
 */
export function activeFaultChips(
  settings: Pick<LabSettings, 'faults' | 'claims'> & Partial<Pick<LabSettings, 'answers'>>,
): Array<{ key: FaultChip; values?: { ms: number } }> {
  const { faults } = settings;
  const chips: Array<{ key: FaultChip; values?: { ms: number } } | false> = [
    faults.bankLatencyMs > 0 && { key: 'bankLatency', values: { ms: faults.bankLatencyMs } },
    faults.bankFailure === 'decline' && { key: 'decline' },
    faults.bankFailure === 'error' && { key: 'bankError' },
    faults.bankTimeoutAfterCharge && { key: 'timeoutAfterCharge' },
    faults.bankLateChargeMs > 0 && { key: 'lateCharge', values: { ms: faults.bankLateChargeMs } },
    faults.stallBeforeBankMs > 0 && { key: 'stall', values: { ms: faults.stallBeforeBankMs } },
    faults.crashBeforeCharge && { key: 'crashBeforeCharge' },
    faults.crashAfterCharge && { key: 'crashAfterCharge' },
    faults.receiptCrashBeforeAck && { key: 'receiptCrash' },
    faults.dropResponse && { key: 'dropResponse' },
    faults.notifyFailsAfterCharge && { key: 'notifyFails' },
    settings.claims.release === 'anyError' && { key: 'releaseAnyError' },
    settings.claims.release === 'never' && { key: 'releaseNever' },
    settings.answers?.duplicate === 'error' && { key: 'answersError' },
    settings.claims.leaseMs !== DEFAULT_LEASE_MS && { key: 'lease', values: { ms: settings.claims.leaseMs } },
  ];
  return chips.filter((chip) => chip !== false);
}

/** The same, in English words (numbers grouped as the lab shows them). */
export function activeFaults(
  settings: Pick<LabSettings, 'faults' | 'claims'> & Partial<Pick<LabSettings, 'answers'>>,
): string[] {
  return activeFaultChips(settings).map(({ key, values }) =>
    english.faults[key].replace('{ms}', values ? values.ms.toLocaleString('en-GB') : ''),
  );
}
