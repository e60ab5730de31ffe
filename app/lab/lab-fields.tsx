'use client';
// The lab's rarer settings, each group folded away until one of its values is not the default: the bank's
// latency, layer 2's key strategy, the faults, the claims' lease, the cluster's gateway. Every number's
// bounds are the settings' own schema's (lib/lab/settings.ts), so the form and the server never disagree.
import { useTranslations } from 'next-intl';
import { type ReactNode, useEffect, useState } from 'react';
import { activeFaultChips } from '@/lib/lab/layer-info';
import {
  ClaimsSchema,
  DEFAULT_LAB_SETTINGS,
  DUPLICATE_ANSWERS,
  type Faults,
  FaultsSchema,
  GatewaySchema,
  KEY_STRATEGIES,
  REFUND_KEY_STRATEGIES,
  RELEASE_RULES,
} from '@/lib/lab/settings';
import { GatewayFile, useGateway } from './gateway-panel';
import styles from './lab.module.css';
import { type LabSettingsState, same } from './use-lab-settings';

/** The faults that are a checkbox each (their labels: lab.console.faults.<key>). */
const FAULT_SWITCHES = [
  'bankTimeoutAfterCharge',
  'crashBeforeCharge',
  'crashAfterCharge',
  'notifyFailsAfterCharge',
  'receiptCrashBeforeAck',
  'dropResponse',
] as const;

/** `<code>` in a message (t.rich). */
const code = (chunks: ReactNode) => <code>{chunks}</code>;

type Group = { lab: LabSettingsState; hydrated: boolean };

/** A number setting's bounds, from its schema (an integer with a minimum and a maximum). */
function bounds(schema: { minValue: number | null; maxValue: number | null }): { min: number; max: number } {
  return { min: schema.minValue ?? 0, max: schema.maxValue ?? Number.MAX_SAFE_INTEGER };
}

function useSetFault(lab: LabSettingsState) {
  return <K extends keyof Faults>(key: K, value: Faults[K]) => lab.change({ faults: { [key]: value } });
}

export function LatencyField({ lab, hydrated, bankTimeoutMs }: Group & { bankTimeoutMs: number }) {
  const t = useTranslations('lab');
  const setFault = useSetFault(lab);
  return (
    <NumberField
      label={t('console.latency')}
      hint={t('console.latencyHint', { seconds: bankTimeoutMs / 1000 })}
      inline
      disabled={!hydrated}
      {...bounds(FaultsSchema.shape.bankLatencyMs)}
      step={250}
      value={lab.settings.faults.bankLatencyMs}
      onChange={(value) => setFault('bankLatencyMs', value)}
    />
  );
}

export function KeyStrategyGroup({ lab, hydrated }: Group) {
  const t = useTranslations('lab');
  const tl = useTranslations('layers');
  const { strategy, refunds } = lab.settings.keys;
  const defaults = DEFAULT_LAB_SETTINGS.keys;
  const state = [
    tl(`keyStrategies.${strategy}.name`),
    ...(refunds === defaults.refunds ? [] : [tl(`refundKeyStrategies.${refunds}.name`)]),
  ];
  return (
    <Collapsible
      title={t('console.keyTitle')}
      state={state.join(' · ').toLowerCase()}
      changed={strategy !== defaults.strategy || refunds !== defaults.refunds}
    >
      <fieldset>
        <legend className="visually-hidden">{t('console.keyTitle')}</legend>
        <p className={styles.hint}>{t('console.keyHint')}</p>
        <Choices
          name="key-strategy"
          options={KEY_STRATEGIES}
          value={strategy}
          disabled={!hydrated}
          words={(option) => ({
            name: tl(`keyStrategies.${option}.name`),
            explains: tl(`keyStrategies.${option}.explains`),
          })}
          onChange={(option) => lab.change({ keys: { strategy: option } })}
        />
      </fieldset>
      <fieldset>
        <legend className={styles.hint}>{t('console.refundKeyHint')}</legend>
        <Choices
          name="refund-key-strategy"
          options={REFUND_KEY_STRATEGIES}
          value={refunds}
          disabled={!hydrated}
          words={(option) => ({
            name: tl(`refundKeyStrategies.${option}.name`),
            explains: tl(`refundKeyStrategies.${option}.explains`),
          })}
          onChange={(option) => lab.change({ keys: { refunds: option } })}
        />
      </fieldset>
    </Collapsible>
  );
}

export function AnswersGroup({ lab, hydrated }: Group) {
  const t = useTranslations('lab');
  const tl = useTranslations('layers');
  const { duplicate } = lab.settings.answers;
  return (
    <Collapsible
      title={t('console.answersTitle')}
      state={tl(`duplicateAnswers.${duplicate}.name`).toLowerCase()}
      changed={duplicate !== DEFAULT_LAB_SETTINGS.answers.duplicate}
    >
      <fieldset>
        <legend className="visually-hidden">{t('console.answersTitle')}</legend>
        <p className={styles.hint}>{t('console.answersHint')}</p>
        <Choices
          name="duplicate-answer"
          options={DUPLICATE_ANSWERS}
          value={duplicate}
          disabled={!hydrated}
          words={(option) => ({
            name: tl(`duplicateAnswers.${option}.name`),
            explains: tl(`duplicateAnswers.${option}.explains`),
          })}
          onChange={(option) => lab.change({ answers: { duplicate: option } })}
        />
      </fieldset>
    </Collapsible>
  );
}

export function FaultsGroup({ lab, hydrated, settlementWindowMs }: Group & { settlementWindowMs: number }) {
  const t = useTranslations('lab');
  const tl = useTranslations('layers');
  const setFault = useSetFault(lab);
  const { faults } = lab.settings;
  const otherFaults = activeFaultChips({
    faults: { ...faults, bankLatencyMs: 0 },
    claims: DEFAULT_LAB_SETTINGS.claims,
  }).map(({ key, values }) => tl(`faults.${key}`, values));
  return (
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
          {...bounds(FaultsSchema.shape.bankLateChargeMs)}
          step={250}
          value={faults.bankLateChargeMs}
          onChange={(value) => setFault('bankLateChargeMs', value)}
        />
        <NumberField
          label={t('console.stall')}
          hint={t('console.stallHint')}
          disabled={!hydrated}
          {...bounds(FaultsSchema.shape.stallBeforeBankMs)}
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
  );
}

export function ClaimsGroup({ lab, hydrated }: Group) {
  const t = useTranslations('lab');
  const tl = useTranslations('layers');
  const { leaseMs, release } = lab.settings.claims;
  const state = [tl('faults.lease', { ms: leaseMs }), tl(`releaseRules.${release}.name`).toLowerCase()];
  return (
    <Collapsible
      title={t('console.claims')}
      state={state.join(t('console.listSeparator'))}
      changed={!same(DEFAULT_LAB_SETTINGS.claims, lab.settings.claims)}
    >
      <fieldset>
        <legend className="visually-hidden">{t('console.claims')}</legend>
        <NumberField
          label={t('console.lease')}
          hint={t('console.leaseHint')}
          disabled={!hydrated}
          {...bounds(ClaimsSchema.shape.leaseMs)}
          step={500}
          value={leaseMs}
          onChange={(value) => lab.change({ claims: { leaseMs: value } })}
        />
      </fieldset>
      <fieldset>
        <legend>{t('console.releaseTitle')}</legend>
        <p className={styles.hint}>{t('console.releaseHint')}</p>
        <Choices
          name="release-rule"
          options={RELEASE_RULES}
          value={release}
          disabled={!hydrated}
          words={(option) => ({
            name: tl(`releaseRules.${option}.name`),
            explains: tl(`releaseRules.${option}.explains`),
          })}
          onChange={(option) => lab.change({ claims: { release: option } })}
        />
      </fieldset>
    </Collapsible>
  );
}

/** One gateway for everybody: its settings are the global ones, shown as nginx runs them. */
export function GatewayGroup({ lab, hydrated }: Group) {
  const t = useTranslations('lab');
  const gatewayState = useGateway();
  const running = gatewayState.view?.running ? gatewayState.view : undefined;
  const gateway = running?.settings ?? lab.settings.gateway;
  const retries = bounds(GatewaySchema.shape.retries);
  return (
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
          {...bounds(GatewaySchema.shape.timeoutMs)}
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
            {Array.from({ length: retries.max - retries.min + 1 }, (_, i) => retries.min + i).map((n) => (
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
  );
}

/** One of a few options, each a radio named and explained in a sentence. */
function Choices<T extends string>(props: {
  name: string;
  options: readonly T[];
  value: T;
  disabled: boolean;
  words: (option: T) => { name: string; explains: string };
  onChange: (option: T) => void;
}) {
  return props.options.map((option) => {
    const { name, explains } = props.words(option);
    return (
      <label className={styles.check} key={option}>
        <input
          type="radio"
          name={props.name}
          disabled={props.disabled}
          checked={props.value === option}
          onChange={() => props.onChange(option)}
        />
        <span>
          <strong>{name}</strong>
          <span className={`${styles.hint} block`}>{explains}</span>
        </span>
      </label>
    );
  });
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
  const t = useTranslations('lab');
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
        {t.rich('console.summary', {
          title,
          state,
          value: (words) => <span className={styles.summaryState}>{words}</span>,
        })}
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
