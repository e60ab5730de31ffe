'use client';
import '@/lib/ui/zod-without-eval'; // before zod is used: the page's CSP forbids eval
import { type ReactNode, useEffect, useMemo, useRef, useState } from 'react';
import { colourOf, KEY_STRATEGY_INFO, SWITCHES, stepName } from '@/lib/lab/layer-info';
import {
  type Faults,
  KEY_STRATEGIES,
  type LabSettings,
  type LabSettingsPatch,
  mergeLabSettings,
} from '@/lib/lab/settings';
import type { TimelineEvent } from '@/lib/lab/timeline-event';
import { useEvery } from '@/lib/ui/use-polling';

type StoredEvent = TimelineEvent & { id: string; streamId: string };

const FAULT_SWITCHES: Array<{
  key: 'bankTimeoutAfterCharge' | 'crashBeforeCharge' | 'crashAfterCharge' | 'receiptCrashBeforeAck';
  label: ReactNode;
}> = [
  { key: 'bankTimeoutAfterCharge', label: 'Charge, then time out (the outcome is unknown to the merchant)' },
  {
    key: 'crashBeforeCharge',
    label: 'Crash the app holding its claims, before the bank (nothing charged; at restart the claim is released)',
  },
  {
    key: 'crashAfterCharge',
    label: (
      <>
        Crash the app right after the charge (<code>npm run demo</code> restarts it; reconciliation settles the payment)
      </>
    ),
  },
  {
    key: 'receiptCrashBeforeAck',
    label: 'The receipt consumer dies after sending a receipt, before its ack (the message is delivered again)',
  },
];
type Props = {
  initialSettings: LabSettings;
  initialEvents: StoredEvent[];
  bankTimeoutMs: number;
  settlementWindowMs: number;
  /** `mine`: an attendee's own lab and lanes (the default); `room`: the presenter's global settings and everyone's lanes. */
  scope?: 'mine' | 'room';
};

const LANES_SHOWN = 30;

export function LabConsole({
  initialSettings,
  initialEvents,
  bankTimeoutMs,
  settlementWindowMs,
  scope = 'mine',
}: Props) {
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
    const saved = response?.ok ? ((await response.json()) as LabSettings) : undefined;
    // A newer change was made meanwhile (judged after the body has arrived, or a click made while it was
    // read would be undone): its answer, which includes this one, is the one to show.
    if (mine !== generation.current) return;
    generation.current += 1;
    if (saved) setSettings(saved);
    else setError('The change was not saved: is the app running?');
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

  return (
    <div className="lab-grid">
      <section className="card" aria-labelledby="switches-title">
        <h2 id="switches-title">Defences</h2>
        <ul className="switch-list">
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
                  <strong>
                    {layer.number}. {layer.name}
                  </strong>{' '}
                  <span className="switch-state">{settings.layers[layer.key] ? 'on' : 'off'}</span>
                  <span className="small muted block">{layer.what}</span>
                </span>
              </label>
            </li>
          ))}
        </ul>
        <fieldset className="faults">
          <legend className="legend-title">Layer 2’s key</legend>
          <p className="small muted">What the request key is made of: the article’s first detail.</p>
          {KEY_STRATEGIES.map((strategy) => (
            <label className="check" key={strategy}>
              <input
                type="radio"
                name="key-strategy"
                disabled={!hydrated}
                checked={settings.keys.strategy === strategy}
                onChange={() => change({ keys: { strategy } })}
              />
              <span>
                <strong>{KEY_STRATEGY_INFO[strategy].name}</strong>
                <span className="small muted block">{KEY_STRATEGY_INFO[strategy].explains}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <fieldset className="faults">
          <legend className="legend-title">Bank faults</legend>
          <NumberField
            label="Latency (ms), after the charge is recorded"
            hint={`Above ${bankTimeoutMs / 1000} s the merchant stops waiting: the outcome becomes unknown.`}
            disabled={!hydrated}
            min={0}
            max={60_000}
            step={250}
            value={settings.faults.bankLatencyMs}
            onChange={(value) => setFault('bankLatencyMs', value)}
          />
          <NumberField
            label="Late charge (ms): the call times out first, the charge lands this much later"
            hint={`The bank charges every request it accepted within ${settlementWindowMs / 1000} s (its settlement window): until then, "no charge" only means "no charge yet".`}
            disabled={!hydrated}
            min={0}
            max={settlementWindowMs}
            step={250}
            value={settings.faults.bankLateChargeMs}
            onChange={(value) => setFault('bankLateChargeMs', value)}
          />
          <NumberField
            label="Pause between the claim and the bank (ms)"
            hint="Like a GC pause or an overloaded host: past the lease, another attempt may take the claim over, and the bank refuses this one's stale fencing token."
            disabled={!hydrated}
            min={0}
            max={60_000}
            step={250}
            value={settings.faults.stallBeforeBankMs}
            onChange={(value) => setFault('stallBeforeBankMs', value)}
          />
          <label className="field">
            <span>Fail before charging</span>
            <select
              disabled={!hydrated}
              value={settings.faults.bankFailure}
              onChange={(event) => setFault('bankFailure', event.target.value as Faults['bankFailure'])}
            >
              <option value="none">No</option>
              <option value="decline">Decline the card (final)</option>
              <option value="error">Bank error (nothing moved, retry allowed)</option>
            </select>
          </label>
          {FAULT_SWITCHES.map(({ key, label }) => (
            <label className="check" key={key}>
              <input
                type="checkbox"
                disabled={!hydrated}
                checked={settings.faults[key]}
                onChange={(event) => setFault(key, event.target.checked)}
              />
              <span>{label}</span>
            </label>
          ))}
        </fieldset>
        <fieldset className="faults">
          <legend className="legend-title">Claims</legend>
          <NumberField
            label="Lease (ms)"
            hint="A claim (the request key, the order's PROCESSING state, the dedup row) not renewed for this long counts as abandoned: a duplicate or the reconciler may take it over."
            disabled={!hydrated}
            min={100}
            max={600_000}
            step={500}
            value={settings.claims.leaseMs}
            onChange={(leaseMs) => change({ claims: { leaseMs } })}
          />
        </fieldset>
        <fieldset className="faults">
          <legend className="legend-title">Gateway</legend>
          <p className="small muted">
            In <code>npm run demo:cluster</code>: how long the gateway waits for an instance before it sends the same
            request to the other one, and how many times it does.
          </p>
          <NumberField
            label="Timeout (ms)"
            disabled={!hydrated}
            min={100}
            max={30_000}
            step={250}
            value={settings.gateway.timeoutMs}
            onChange={(timeoutMs) => change({ gateway: { timeoutMs } })}
          />
          <label className="field">
            <span>Retries</span>
            <select
              disabled={!hydrated}
              value={settings.gateway.retries}
              onChange={(event) => change({ gateway: { retries: Number(event.target.value) } })}
            >
              {[0, 1, 2, 3].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        </fieldset>
        <div className="row">
          <button type="button" className="button secondary" onClick={reset} disabled={!hydrated}>
            Reset: all on, no faults
          </button>
          <a className="button secondary" href="/" target="_blank" rel="noreferrer">
            New checkout in a tab
          </a>
        </div>
        <p role="alert" className="alarm small">
          {error ?? ''}
        </p>
      </section>
      <Timeline initialEvents={initialEvents} scope={scope} />
    </div>
  );
}

/** A number input that keeps its value within [min, max]. */
function NumberField(props: {
  label: string;
  hint?: string;
  disabled: boolean;
  min: number;
  max: number;
  step: number;
  value: number;
  onChange: (value: number) => void;
}) {
  const { min, max } = props;
  return (
    <label className="field">
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
      {props.hint ? <span className="small muted">{props.hint}</span> : null}
    </label>
  );
}

type LaneView = { requestId: string; first: StoredEvent; events: StoredEvent[] };

function Timeline({ initialEvents, scope }: { initialEvents: StoredEvent[]; scope: 'mine' | 'room' }) {
  const [events, setEvents] = useState<StoredEvent[]>(initialEvents);
  const [filter, setFilter] = useState('');
  const lastId = useRef(initialEvents.at(-1)?.streamId);

  useEvery(700, async () => {
    const query = new URLSearchParams(scope === 'room' ? { scope: 'room' } : {});
    if (lastId.current) query.set('after', lastId.current);
    const response = await fetch(`/api/lab/timeline?${query}`, { cache: 'no-store' });
    if (!response.ok) return;
    const { events: fresh } = (await response.json()) as { events: StoredEvent[] };
    if (fresh.length === 0) return;
    lastId.current = fresh.at(-1)?.streamId;
    setEvents((current) => [...current, ...fresh].slice(-3000));
  });

  const lanes = useMemo(() => {
    const byRequest = new Map<string, LaneView>();
    for (const event of events) {
      const lane = byRequest.get(event.requestId);
      if (lane) lane.events.push(event);
      else byRequest.set(event.requestId, { requestId: event.requestId, first: event, events: [event] });
    }
    const wanted = filter.trim().toLowerCase();
    return [...byRequest.values()]
      .filter((lane) => !wanted || lane.first.orderNo.toLowerCase().includes(wanted))
      .reverse()
      .slice(0, LANES_SHOWN);
  }, [events, filter]);

  // An attendee clears their own view; the presenter empties the timeline for the room.
  const clear = async () => {
    if (scope === 'room') await fetch('/api/lab/timeline', { method: 'DELETE' }).catch(() => undefined);
    setEvents([]);
  };

  return (
    <section className="card timeline-card" aria-labelledby="timeline-title">
      <div className="row spread">
        <h2 id="timeline-title">Timeline</h2>
        <div className="row">
          <label className="field inline">
            <span>Order</span>
            <input
              type="search"
              value={filter}
              placeholder="ord_…"
              onChange={(event) => setFilter(event.target.value)}
            />
          </label>
          <button type="button" className="button secondary" onClick={clear}>
            Clear
          </button>
        </div>
      </div>
      <p className="small muted">
        One lane per request, newest first: each defence it passed or was stopped by, then the outcome.
      </p>
      {lanes.length === 0 ? <p className="muted">No requests yet. Pay in another tab.</p> : null}
      <ol className="lanes" aria-label="Requests">
        {lanes.map((lane) => (
          <Lane key={lane.requestId} lane={lane} />
        ))}
      </ol>
    </section>
  );
}

function Lane({ lane }: { lane: LaneView }) {
  const total = lane.events.reduce((sum, event) => sum + event.durationMs, 0);
  const outcome = lane.events.find((event) => event.step === 'outcome');
  const steps = lane.events.filter((event) => event.step !== 'request' && event.step !== 'outcome');
  // Layer 2's key, as its steps name it ("key order:…: …"): two lanes of one order with two keys stand out.
  const key = lane.events
    .map((event) => (event.step === 'requestKey' ? /^key (\S+?):? /.exec(event.detail ?? '')?.[1] : undefined))
    .find(Boolean);
  return (
    <li
      className="lane"
      data-request-id={lane.requestId}
      data-order-no={lane.first.orderNo}
      data-channel={lane.first.channel}
    >
      <div className="lane-head small">
        <span className="mono">{new Date(lane.first.at).toLocaleTimeString('en-GB')}</span>
        <span className="mono">{lane.first.orderNo}</span>
        <span>{lane.first.channel}</span>
        <span>{lane.first.instance}</span>
        {key ? <span className="mono lane-key">{key}</span> : null}
        <span>
          {outcome ||
          lane.first.channel === 'worker' ||
          lane.first.channel === 'gateway' ||
          lane.first.channel === 'reconciler'
            ? `${total} ms`
            : 'running…'}
        </span>
      </div>
      <ol className="steps">
        {steps.map((event) => (
          <li
            key={event.id}
            className={`step decision-${event.decision}`}
            style={{ borderColor: colourOf(event.step) }}
            title={event.detail}
            data-step={event.step}
            data-decision={event.decision}
          >
            <span className="step-name">{stepName(event.step)}</span>{' '}
            <span className="step-decision">{event.decision}</span>
            {event.detail && event.decision !== 'off' ? <span className="step-detail">{event.detail}</span> : null}
            {event.durationMs > 0 ? <span className="step-ms">{event.durationMs} ms</span> : null}
          </li>
        ))}
        {outcome ? (
          <li
            className={`step outcome outcome-${outcome.decision}`}
            data-step="outcome"
            data-decision={outcome.decision}
          >
            <span className="step-name">Outcome</span>{' '}
            <span className="step-decision">{outcome.decision.replace('_', ' ')}</span>
            {outcome.detail ? <span className="step-detail">{outcome.detail}</span> : null}
          </li>
        ) : null}
      </ol>
    </li>
  );
}
