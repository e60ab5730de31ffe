'use client';
import '@/lib/ui/zod-without-eval'; // before zod is used: the page's CSP forbids eval
import { useTranslations } from 'next-intl';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { DEFAULT_LEASE_MS } from '@/lib/lab/constants';
import { EXERCISES, exerciseMatching, exerciseSettings, findExercise } from '@/lib/lab/exercises';
import { activeFaultChips, colourOf, SWITCHES } from '@/lib/lab/layer-info';
import {
  DEFAULT_LAB_SETTINGS,
  type Faults,
  KEY_STRATEGIES,
  type LabSettings,
  type LabSettingsPatch,
  mergeLabSettings,
} from '@/lib/lab/settings';
import { useEvery } from '@/lib/ui/use-polling';
import { GatewayFile, useGateway } from './gateway-panel';
import styles from './lab.module.css';
import { type StoredEvent, Timeline } from './timeline';

/** The faults that are a checkbox each (their labels: lab.console.faults.<key>). */
const FAULT_SWITCHES = [
  'bankTimeoutAfterCharge',
  'crashBeforeCharge',
  'crashAfterCharge',
  'receiptCrashBeforeAck',
  'dropResponse',
] as const;

/** `<code>` in a message (t.rich). */
const code = (chunks: ReactNode) => <code>{chunks}</code>;

type Props = {
  initialSettings: LabSettings;
  initialEvents: StoredEvent[];
  bankTimeoutMs: number;
  settlementWindowMs: number;
  /** `mine`: an attendee's own lab and lanes (the default); `room`: the presenter's global settings and everyone's lanes. */
  scope?: 'mine' | 'room';
  /** The page's heading, at the start of the toolbar. */
  heading?: ReactNode;
  /** `?exercise=3`: the exercise the preset control offers first (shown, never applied by loading the page). */
  initialExercise?: string;
  /** `?order=ord_…`: the timeline's order filter. */
  initialOrder?: string;
};

const same = (a: object, b: object) =>
  Object.entries(a).every(([key, value]) => (b as Record<string, unknown>)[key] === value);

export function LabConsole({
  initialSettings,
  initialEvents,
  bankTimeoutMs,
  settlementWindowMs,
  scope = 'mine',
  heading,
  initialExercise,
  initialOrder,
}: Props) {
  const t = useTranslations('lab');
  const tl = useTranslations('layers');
  const global = scope === 'room' ? '?scope=global' : '';
  const [settings, setSettings] = useState<LabSettings>(initialSettings);
  // Until React has hydrated the page, a click would flip a box that React then flips back: keep them disabled.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  const [error, setError] = useState<string>();
  // Every write bumps the generation; a poll that started before the last write, or while a write is still
  // on its way (it may read the settings from before it), is stale and dropped, so a switch never flickers
  // back. Other tabs' changes arrive with the next poll.
  const generation = useRef(0);
  const writing = useRef(0);

  useEvery(1500, async () => {
    if (writing.current > 0) return;
    const started = generation.current;
    const response = await fetch(`/api/lab/config${global}`, { cache: 'no-store' });
    const fresh = response.ok ? ((await response.json()) as LabSettings) : undefined;
    // Judged after the body has arrived: a change made while it was read would otherwise be undone.
    if (fresh && started === generation.current && writing.current === 0) setSettings(fresh);
  });

  const send = async (url: string, init: RequestInit) => {
    const mine = ++generation.current;
    setError(undefined);
    writing.current += 1;
    const response = await fetch(url, init)
      .catch(() => undefined)
      .finally(() => {
        writing.current -= 1;
      });
    const body = response ? ((await response.json().catch(() => undefined)) as unknown) : undefined;
    const saved = response?.ok ? (body as LabSettings) : undefined;
    // A newer change was made meanwhile (judged after the body has arrived, or a click made while it was
    // read would be undone): its answer, which includes this one, is the one to show.
    if (mine !== generation.current) return;
    generation.current += 1;
    if (saved) {
      setSettings(saved);
      return;
    }
    const detail = (body as { detail?: unknown } | undefined)?.detail;
    setError(
      response
        ? typeof detail === 'string'
          ? t('console.notSavedBecause', { detail: detail.replace(/\.$/, '') })
          : t('console.notSaved')
        : t('console.notSavedOffline'),
    );
    // What the server holds now, since the switches showed the change at once.
    const now = await fetch(`/api/lab/config${global}`, { cache: 'no-store' }).catch(() => undefined);
    if (now?.ok && mine + 1 === generation.current) setSettings((await now.json()) as LabSettings);
  };
  const change = (patch: LabSettingsPatch) => {
    setSettings((current) => mergeLabSettings(current, patch)); // at once; the server's answer follows
    return send(`/api/lab/config${global}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(patch),
    });
  };
  const reset = () => send(`/api/lab/reset${global}`, { method: 'POST' });

  const setFault = <K extends keyof Faults>(key: K, value: Faults[K]) => change({ faults: { [key]: value } });

  // The exercise presets: the guide's "Break it" lab for each exercise, applied as one whole write.
  const matching = exerciseMatching(settings);
  const [chosen, setChosen] = useState(
    () => findExercise(initialExercise ?? '')?.id ?? matching?.id ?? EXERCISES[0]?.id ?? '1',
  );
  const exercise = findExercise(chosen);
  // The whole settings, the gateway's included (its defaults are what exercise 10 describes): nothing set
  // before, for another exercise, lingers.
  const setUp = () => (exercise ? change(exerciseSettings(exercise)) : undefined);
  const isDefault = (['layers', 'faults', 'claims', 'keys'] as const).every((part) =>
    same(DEFAULT_LAB_SETTINGS[part], settings[part]),
  );

  const { faults } = settings;
  const otherFaults = activeFaultChips({
    faults: { ...faults, bankLatencyMs: 0 },
    claims: { leaseMs: DEFAULT_LEASE_MS },
  }).map(({ key, values }) => tl(`faults.${key}`, values));
  /** An exercise's title in the reader's language (lab.exercises.<id>), else the list's English one. */
  const titleOf = (option: { id: string; title: string }) =>
    t.has(`exercises.${option.id}` as 'exercises.1') ? t(`exercises.${option.id}` as 'exercises.1') : option.title;
  // One gateway for everybody: its settings are the global ones, shown as nginx runs them.
  const gatewayState = useGateway();
  const running = gatewayState.view?.running ? gatewayState.view : undefined;
  const gateway = running?.settings ?? settings.gateway;

  return (
    <div className={styles.console}>
      <div className={styles.toolbar}>
        {heading}
        <div className={styles.preset}>
          <label htmlFor="exercise">{t('console.exercise')}</label>
          <select id="exercise" value={chosen} onChange={(event) => setChosen(event.target.value)}>
            {EXERCISES.map((option) => (
              <option key={option.id} value={option.id}>
                {t('console.exerciseOption', { id: option.id, title: titleOf(option) })}
              </option>
            ))}
          </select>
          <button type="button" className="button" onClick={setUp} disabled={!hydrated || !exercise}>
            {t('console.setUp', { id: chosen })}
          </button>
        </div>
        <div className={styles.toolbarEnd}>
          <button type="button" className="button secondary" onClick={reset} disabled={!hydrated}>
            {t('console.reset')}
          </button>
          <a className="button secondary" href="/" target="_blank" rel="noreferrer">
            {t('console.newCheckout')}
          </a>
        </div>
        <p role="alert" className={styles.alarm}>
          {error ?? ''}
        </p>
      </div>
      <div className={styles.columns}>
        <section className={styles.panel} aria-labelledby="switches-title">
          <h2 id="switches-title">{t('console.defences')}</h2>
          <p className={styles.current} aria-live="polite" data-exercise={matching?.id}>
            {matching
              ? t('console.setUpExercise', { id: matching.id, title: titleOf(matching) })
              : isDefault
                ? t('console.setUpDefault')
                : t('console.custom')}
          </p>
          <ul className={styles.switches}>
            {SWITCHES.map((layer) => (
              <li key={layer.key} style={{ borderLeftColor: colourOf(layer.key) }}>
                <label>
                  <input
                    type="checkbox"
                    disabled={!hydrated}
                    role="switch"
                    aria-checked={settings.layers[layer.key]}
                    checked={settings.layers[layer.key]}
                    onChange={(event) => change({ layers: { [layer.key]: event.target.checked } })}
                  />
                  <span>
                    <span className={styles.switchName}>
                      {layer.number}. {tl(`names.${layer.key}`)}
                    </span>
                    <span className={styles.what}>{tl(`what.${layer.key}`)}</span>
                  </span>
                  <span className={styles.switchState} data-on={settings.layers[layer.key]}>
                    {settings.layers[layer.key] ? t('console.switchOn') : t('console.switchOff')}
                  </span>
                </label>
              </li>
            ))}
          </ul>
          <NumberField
            label={t('console.latency')}
            hint={t('console.latencyHint', { seconds: bankTimeoutMs / 1000 })}
            inline
            disabled={!hydrated}
            min={0}
            max={60_000}
            step={250}
            value={faults.bankLatencyMs}
            onChange={(value) => setFault('bankLatencyMs', value)}
          />
          <Collapsible
            title={t('console.keyTitle')}
            state={tl(`keyStrategies.${settings.keys.strategy}.name`).toLowerCase()}
            changed={settings.keys.strategy !== DEFAULT_LAB_SETTINGS.keys.strategy}
          >
            <fieldset>
              <legend className="visually-hidden">{t('console.keyTitle')}</legend>
              <p className={styles.hint}>{t('console.keyHint')}</p>
              {KEY_STRATEGIES.map((strategy) => (
                <label className={styles.check} key={strategy}>
                  <input
                    type="radio"
                    name="key-strategy"
                    disabled={!hydrated}
                    checked={settings.keys.strategy === strategy}
                    onChange={() => change({ keys: { strategy } })}
                  />
                  <span>
                    <strong>{tl(`keyStrategies.${strategy}.name`)}</strong>
                    <span className={`${styles.hint} block`}>{tl(`keyStrategies.${strategy}.explains`)}</span>
                  </span>
                </label>
              ))}
            </fieldset>
          </Collapsible>
          <Collapsible
            title={t('console.moreFaults')}
            state={otherFaults.length > 0 ? otherFaults.join(t('console.listSeparator')) : t('console.none')}
            changed={otherFaults.length > 0}
          >
            <fieldset>
              <legend className="visually-hidden">{t('console.moreFaults')}</legend>
              <NumberField
                label={t('console.lateCharge')}
                hint={t('console.lateChargeHint', { seconds: settlementWindowMs / 1000 })}
                disabled={!hydrated}
                min={0}
                max={settlementWindowMs}
                step={250}
                value={faults.bankLateChargeMs}
                onChange={(value) => setFault('bankLateChargeMs', value)}
              />
              <NumberField
                label={t('console.stall')}
                hint={t('console.stallHint')}
                disabled={!hydrated}
                min={0}
                max={60_000}
                step={250}
                value={faults.stallBeforeBankMs}
                onChange={(value) => setFault('stallBeforeBankMs', value)}
              />
              <label className={styles.field}>
                <span>{t('console.failBeforeCharging')}</span>
                <select
                  disabled={!hydrated}
                  value={faults.bankFailure}
                  onChange={(event) => setFault('bankFailure', event.target.value as Faults['bankFailure'])}
                >
                  <option value="none">{t('console.failNone')}</option>
                  <option value="decline">{t('console.failDecline')}</option>
                  <option value="error">{t('console.failError')}</option>
                </select>
              </label>
              {FAULT_SWITCHES.map((key) => (
                <label className={styles.check} key={key}>
                  <input
                    type="checkbox"
                    disabled={!hydrated}
                    checked={faults[key]}
                    onChange={(event) => setFault(key, event.target.checked)}
                  />
                  <span>{t.rich(`console.faults.${key}`, { code })}</span>
                </label>
              ))}
            </fieldset>
          </Collapsible>
          <Collapsible
            title={t('console.claims')}
            state={tl('faults.lease', { ms: settings.claims.leaseMs })}
            changed={settings.claims.leaseMs !== DEFAULT_LAB_SETTINGS.claims.leaseMs}
          >
            <fieldset>
              <legend className="visually-hidden">{t('console.claims')}</legend>
              <NumberField
                label={t('console.lease')}
                hint={t('console.leaseHint')}
                disabled={!hydrated}
                min={100}
                max={600_000}
                step={500}
                value={settings.claims.leaseMs}
                onChange={(leaseMs) => change({ claims: { leaseMs } })}
              />
            </fieldset>
          </Collapsible>
          <Collapsible
            title={t('console.gateway')}
            state={t('console.gatewayState', { ms: gateway.timeoutMs, retries: gateway.retries })}
            changed={!same(DEFAULT_LAB_SETTINGS.gateway, gateway)}
          >
            <fieldset>
              <legend className="visually-hidden">{t('console.gateway')}</legend>
              <p className={styles.hint}>
                {running ? t.rich('console.gatewayRunning', { code }) : t.rich('console.gatewayNotRunning', { code })}
              </p>
              <NumberField
                label={t('console.timeout')}
                disabled={!hydrated || !running}
                min={100}
                max={30_000}
                step={250}
                value={gateway.timeoutMs}
                onChange={(timeoutMs) => void gatewayState.change({ timeoutMs })}
              />
              <label className={styles.field}>
                <span>{t('console.retries')}</span>
                <select
                  disabled={!hydrated || !running}
                  value={gateway.retries}
                  onChange={(event) => void gatewayState.change({ retries: Number(event.target.value) })}
                >
                  {[0, 1, 2, 3].map((n) => (
                    <option key={n} value={n}>
                      {n}
                    </option>
                  ))}
                </select>
              </label>
              {gatewayState.error ? <p role="alert">{gatewayState.error}</p> : null}
              {running ? <GatewayFile view={running} /> : null}
            </fieldset>
          </Collapsible>
        </section>
        <Timeline initialEvents={initialEvents} scope={scope} initialFilter={initialOrder} />
      </div>
    </div>
  );
}

/**
 * A group of the rarer settings, folded away: open while one of its values is not the default, so what an
 * exercise rigged is never hidden; otherwise as the user left it.
 */
function Collapsible({
  title,
  state,
  changed,
  children,
}: {
  title: string;
  state: string;
  changed: boolean;
  children: ReactNode;
}) {
  const [open, setOpen] = useState(changed);
  useEffect(() => {
    if (changed) setOpen(true);
  }, [changed]);
  return (
    <details
      className={styles.more}
      open={open}
      data-changed={changed}
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary>
        {title}: <span className={styles.summaryState}>{state}</span>
      </summary>
      {children}
    </details>
  );
}

/** A number input that keeps its value within [min, max]. */
function NumberField(props: {
  label: string;
  hint?: string;
  inline?: boolean;
  disabled: boolean;
  min: number;
  max: number;
  step: number;
  value: number;
  onChange: (value: number) => void;
}) {
  const { min, max } = props;
  return (
    <label className={`${styles.field} ${props.inline ? styles.inline : ''}`}>
      <span>{props.label}</span>
      <input
        type="number"
        disabled={props.disabled}
        min={min}
        max={max}
        step={props.step}
        value={props.value}
        onChange={(event) => props.onChange(Math.max(min, Math.min(max, Number(event.target.value) || min)))}
      />
      {props.hint ? <span className={styles.hint}>{props.hint}</span> : null}
    </label>
  );
}
