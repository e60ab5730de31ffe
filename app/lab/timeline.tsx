'use client';
// The lab's timeline: one lane per request, newest first. Each lane reads left to right in the layers' order
// and ends at the step that ended the request (the layer that stopped it, or the bank), with what followed
// as its consequence; each lane says when it began relative to the first lane of its order.
//
// What a step decided and why are shown in the reader's language (timeline.decisions, timeline.reasons); the
// data attributes keep the raw values the tests and lane-view.ts read, and a step without a reason (an event
// from before reasons were messages) shows its English detail.
import { useFormatter, useTranslations } from 'next-intl';
import { type ReactNode, useMemo, useRef, useState } from 'react';
import { defencesOf, type LanePlan, offsetsByOrder, planLane, readDelivery } from '@/lib/lab/lane-view';
import { colourOf, SWITCHES } from '@/lib/lab/layer-info';
import type { TimelineEvent, TimelineStep } from '@/lib/lab/timeline-event';
import { useEvery } from '@/lib/ui/use-polling';
import { CLOCK } from './gateway-panel';
import styles from './lab.module.css';

export type StoredEvent = TimelineEvent & { id: string; streamId: string };

const LANES_SHOWN = 30;

type LaneView = { requestId: string; first: StoredEvent; events: StoredEvent[] };

export function Timeline({
  initialEvents,
  scope,
  initialFilter = '',
  client,
}: {
  initialEvents: StoredEvent[];
  scope: 'mine' | 'room';
  initialFilter?: string;
  /** An X-Client-Id whose lanes to show instead of this browser's (`/lab?client=<id>`). */
  client?: string;
}) {
  const t = useTranslations('lab.timeline');
  const [events, setEvents] = useState<StoredEvent[]>(initialEvents);
  const [filter, setFilter] = useState(initialFilter);
  const lastId = useRef(initialEvents.at(-1)?.streamId);

  useEvery(700, async () => {
    const query = new URLSearchParams(scope === 'room' ? { scope: 'room' } : client ? { client } : {});
    if (lastId.current) query.set('after', lastId.current);
    const response = await fetch(`/api/lab/timeline?${query}`, { cache: 'no-store' });
    if (!response.ok) return;
    const { events: fresh } = (await response.json()) as { events: StoredEvent[] };
    if (fresh.length === 0) return;
    lastId.current = fresh.at(-1)?.streamId;
    // An event that concerns everyone may come twice (it is read from the cursor's own id on): kept once.
    setEvents((current) => {
      const seen = new Set(current.map((event) => event.id));
      return [...current, ...fresh.filter((event) => !seen.has(event.id))].slice(-3000);
    });
  });

  const { lanes, offsets, lanesPerOrder, clustered } = useMemo(() => groupLanes(events, filter), [events, filter]);

  // An attendee clears their own view; the presenter empties the timeline for the room.
  const clear = async () => {
    if (scope === 'room') await fetch('/api/lab/timeline', { method: 'DELETE' }).catch(() => undefined);
    setEvents([]);
  };

  return (
    <section className={`${styles.panel} ${styles.timeline}`} aria-labelledby="timeline-title">
      <TimelineHead filter={filter} onFilter={setFilter} onClear={clear} />
      {client ? (
        <p className="small" data-testid="timeline-client">
          {t.rich('ofClient', { client, code: (chunks) => <code>{chunks}</code> })}
        </p>
      ) : null}
      <div className={styles.laneScroll}>
        {lanes.length === 0 ? (
          <p className={styles.empty}>{filter ? t('noneForOrder', { order: filter }) : t('none')}</p>
        ) : null}
        <ol className={`lanes ${styles.laneList}`} aria-label={t('requests')}>
          {lanes.map((lane) => (
            <Lane
              key={lane.requestId}
              lane={lane}
              offsetMs={(lanesPerOrder.get(lane.first.orderNo) ?? 0) > 1 ? offsets.get(lane.requestId) : undefined}
              showInstance={clustered}
              onOrder={setFilter}
            />
          ))}
        </ol>
      </div>
    </section>
  );
}

/** The timeline's title, its order filter, and the button that empties it. */
function TimelineHead({
  filter,
  onFilter,
  onClear,
}: {
  filter: string;
  onFilter: (filter: string) => void;
  onClear: () => void;
}) {
  const t = useTranslations('lab.timeline');
  return (
    <div className={styles.timelineHead}>
      <h2 id="timeline-title">{t('title')}</h2>
      <div className={styles.filter}>
        <label htmlFor="order-filter">{t('order')}</label>
        <input
          id="order-filter"
          type="search"
          value={filter}
          placeholder="ord_…"
          onChange={(event) => onFilter(event.target.value)}
        />
        <button
          type="button"
          className="button secondary"
          onClick={() => onFilter('')}
          disabled={filter === ''}
          title={t('clearFilterTitle')}
        >
          {t('clearFilter')}
        </button>
        <button type="button" className="button secondary" onClick={onClear}>
          {t('clearTimeline')}
        </button>
      </div>
    </div>
  );
}

/** The events as lanes (one per request), newest first and filtered by order, and what the lanes show beside them. */
function groupLanes(events: StoredEvent[], filter: string) {
  const byRequest = new Map<string, LaneView>();
  for (const event of events) {
    const lane = byRequest.get(event.requestId);
    if (lane) lane.events.push(event);
    else byRequest.set(event.requestId, { requestId: event.requestId, first: event, events: [event] });
  }
  const all = [...byRequest.values()];
  // How many lanes each order has: the first of several says "first", a lone one needs no offset.
  const perOrder = new Map<string, number>();
  for (const lane of all) perOrder.set(lane.first.orderNo, (perOrder.get(lane.first.orderNo) ?? 0) + 1);
  const wanted = filter.trim().toLowerCase();
  return {
    lanes: all
      // A change of Redis server concerns every order: it stays among one order's lanes too.
      .filter((lane) => !wanted || lane.first.orderNo.toLowerCase().includes(wanted) || lane.first.channel === 'redis')
      .reverse()
      .slice(0, LANES_SHOWN),
    offsets: offsetsByOrder(all.map((lane) => lane.first)),
    lanesPerOrder: perOrder,
    // Which instance handled a request matters when there are several (npm run demo:cluster).
    clustered:
      new Set(all.filter((lane) => lane.first.channel !== 'worker').map((lane) => lane.first.instance)).size > 1,
  };
}

/**
 * The words of the timeline in the reader's language: a step's name, what it decided, and why (as React, its
 * values in code where they are identifiers; or as plain text, for a tooltip).
 */
function useWords() {
  const t = useTranslations('lab.timeline');
  const steps = useTranslations('layers.steps');
  const layers = useTranslations('layers.names');
  const said = useTranslations('timeline');
  const format = useFormatter();
  type Decision = Parameters<typeof said>[0] & `decisions.${string}`;
  type Reason = Parameters<typeof said>[0] & `reasons.${string}`;
  const reasonKey = (event: TimelineEvent): Reason | undefined => {
    const key = event.reason && (`reasons.${event.reason.key}` as Reason);
    return key && said.has(key) ? key : undefined;
  };
  return {
    t,
    clock: (at: number) => format.dateTime(new Date(at), CLOCK),
    ms: (value: number) => t('ms', { ms: value }),
    stepName: (step: TimelineStep) => steps(step),
    layerName: (layer: (typeof SWITCHES)[number]['key']) => layers(layer),
    decision: (decision: string) => {
      const key = `decisions.${decision}` as Decision;
      return said.has(key) ? said(key) : decision.replaceAll('_', ' ');
    },
    /** Why the step decided what it did, drawn. */
    reason: (event: TimelineEvent): ReactNode => {
      const key = reasonKey(event);
      return key ? said.rich(key, { ...event.reason?.values, code: (chunks) => <code>{chunks}</code> }) : event.detail;
    },
    /** The same, as text (a tooltip). */
    reasonText: (event: TimelineEvent): string | undefined => {
      const key = reasonKey(event);
      return key ? said.markup(key, { ...event.reason?.values, code: (chunks) => chunks }) : event.detail;
    },
  };
}

/**
 * Decisions whose detail is routine (a key, a fence, a row): kept for screen readers and the tooltip, not
 * drawn, so a lane stays two lines on a projector. What stopped a request, or went wrong, is always drawn.
 */
const ROUTINE = new Set(['passed', 'claimed', 'inserted', 'sent', 'completed', 'received']);
const detailClass = (decision: string) => (ROUTINE.has(decision) ? 'visually-hidden' : styles.stepDetail);

/** "layer 3" for a defence (its name follows, on the step); the reconciler otherwise. */
function stopperOf(step: TimelineStep, words: ReturnType<typeof useWords>): string {
  const layer = SWITCHES.find((s) => s.key === step);
  return layer ? words.t('layer', { number: layer.number }) : words.stepName(step);
}

/**
 * A step's own time, when it is a wait a person notices (the bank's latency, a stall, a lease): tens of
 * milliseconds are noise on a projector, the lane's total says them, and on a busy machine they made every
 * lane a line taller (the projector test's three lanes no longer fitted).
 */
const STEP_MS_SHOWN = 100;

/** A step's own time, when it is that long (data-step-ms: the projector test finds the lanes it made a line taller). */
function StepMs({ durationMs }: { durationMs: number }) {
  const { ms } = useWords();
  if (durationMs < STEP_MS_SHOWN) return null;
  return (
    <span className={styles.stepMs} data-step-ms={durationMs}>
      {ms(durationMs)}
    </span>
  );
}

function Lane({
  lane,
  offsetMs,
  showInstance,
  onOrder,
}: {
  lane: LaneView;
  offsetMs: number | undefined;
  showInstance: boolean;
  onOrder: (orderNo: string) => void;
}) {
  const words = useWords();
  const { first } = lane;
  const plan = planLane(lane.events);
  const worker = first.channel === 'worker';
  return (
    <li
      className="lane"
      data-request-id={lane.requestId}
      data-order-no={first.orderNo}
      data-channel={first.channel}
      data-ends-at={plan.endsAt}
      data-ended={plan.endKind}
    >
      <LaneHead lane={lane} plan={plan} offsetMs={offsetMs} showInstance={showInstance} onOrder={onOrder} />
      <ol className={`steps ${styles.path}`}>
        {plan.path.map((event, index) =>
          event === plan.end ? (
            <EndStep key={event.id} event={event} plan={plan} />
          ) : (
            <Step key={event.id} event={event} label={worker ? deliveryLabel(event, index, words) : undefined} />
          ),
        )}
        {plan.outcome ? (
          <li
            className={`${styles.step} ${styles.outcome}`}
            data-step="outcome"
            data-decision={plan.outcome.decision}
            title={words.reasonText(plan.outcome)}
          >
            <span className={styles.stepName}>{words.stepName('outcome')}</span>
            <span>{words.decision(plan.outcome.decision)}</span>
            {plan.outcome.detail ? (
              <span className={detailClass(plan.outcome.decision)}>{words.reason(plan.outcome)}</span>
            ) : null}
          </li>
        ) : null}
      </ol>
    </li>
  );
}

/** A lane's head: when it began (and after the first of its order), the order, who sent it, its key, its defences. */
function LaneHead({
  lane,
  plan,
  offsetMs,
  showInstance,
  onOrder,
}: {
  lane: LaneView;
  plan: LanePlan<StoredEvent>;
  offsetMs: number | undefined;
  showInstance: boolean;
  onOrder: (orderNo: string) => void;
}) {
  const words = useWords();
  const { t, ms } = words;
  const { first } = lane;
  const total = lane.events.reduce((sum, event) => sum + event.durationMs, 0);
  // Layer 2's key, as its steps name it ("key order:…: …"): two lanes of one order with two keys stand out.
  const key = lane.events
    .map((event) => (event.step === 'requestKey' ? /^key (\S+?):? /.exec(event.detail ?? '')?.[1] : undefined))
    .find(Boolean);
  const defences = defencesOf(plan.received);
  const running = plan.endsAt === undefined;
  return (
    <div className={styles.laneHead}>
      <span className={styles.clock}>{words.clock(first.at)}</span>
      {offsetMs !== undefined ? (
        <span className={styles.offset} title={t('sinceFirst')}>
          {offsetMs === 0 ? t('first') : t('after', { ms: offsetMs })}
        </span>
      ) : null}
      {first.orderNo ? (
        <button
          type="button"
          className={styles.orderButton}
          translate="no"
          onClick={() => onOrder(first.orderNo)}
          title={t('onlyThisOrder')}
        >
          {first.orderNo}
        </button>
      ) : null}
      <LaneSender lane={lane} showInstance={showInstance} />
      {key ? (
        <span className={styles.laneKey} title={t('keyTitle', { key })} data-testid="lane-key" translate="no">
          {key}
        </span>
      ) : null}
      {defences ? <span className={styles.soft}>{t('defences', { defences })}</span> : null}
      {running ? (
        <span className={styles.total}>{t('running')}</span>
      ) : total > 0 ? (
        <span className={`${styles.soft} ${styles.total}`}>{ms(total)}</span>
      ) : null}
    </div>
  );
}

/** Who sent the request: its channel (and instance, in a cluster), or the receipt worker and the charge it is about. */
function LaneSender({ lane, showInstance }: { lane: LaneView; showInstance: boolean }) {
  const { t } = useWords();
  const { first } = lane;
  if (first.channel !== 'worker') {
    return (
      <span title={first.instance}>
        {t(`channels.${first.channel}`)}
        {showInstance ? (
          <span className={styles.soft}>
            {' '}
            {t.rich('onInstance', {
              instance: first.instance,
              name: (chunks) => <span translate="no">{chunks}</span>,
            })}
          </span>
        ) : null}
      </span>
    );
  }
  // A worker's lane is one message, about one charge: the payment lane whose bank step names that charge.
  const charge = lane.events.map((event) => readDelivery(event).chargeId).find(Boolean);
  return (
    <span title={t('workerTitle', { message: lane.requestId.replace(/^rcpt-/, ''), instance: first.instance })}>
      {t('worker')}
      {charge ? (
        <>
          {/* The message holds its own separator: a space in English, a full-width comma in Chinese. */}
          {t.rich('forCharge', {
            charge,
            id: (chunks) => (
              <span className={styles.charge} translate="no">
                {chunks}
              </span>
            ),
          })}
        </>
      ) : null}
    </span>
  );
}

/**
 * A receipt-worker step is one delivery of the lane's message to the consumer group: the first, or one taken
 * over from a consumer that died before its ack (XAUTOCLAIM), answered "duplicate" when layer 4's RECEIPT row
 * shows the receipt went out already.
 */
function deliveryLabel(
  event: StoredEvent,
  index: number,
  { t }: ReturnType<typeof useWords>,
): { name: string; detail?: string } {
  const { redelivered, result } = readDelivery(event);
  return {
    name: t(redelivered ? 'redelivered' : 'delivery', { number: index + 1 }),
    // A duplicate says why (layer 4's RECEIPT row); an older event's words are shown as they are.
    detail: event.decision === 'duplicate' ? t('receiptAlreadySent') : result === event.decision ? undefined : result,
  };
}

function Step({ event, label }: { event: StoredEvent; label?: { name: string; detail?: string } }) {
  const words = useWords();
  const { stepName } = words;
  const detail = label ? label.detail : event.detail && words.reason(event);
  // A layer that is off: its number, dashed in its colour (its name in the tooltip), so the path stays short.
  const off = event.decision === 'off';
  const layer = SWITCHES.find((s) => s.key === event.step);
  return (
    <li
      className={styles.step}
      style={{ borderColor: colourOf(event.step) }}
      title={off ? words.t('isOff', { name: stepName(event.step) }) : words.reasonText(event)}
      data-step={event.step}
      data-decision={event.decision}
    >
      {off && layer ? (
        <span className={styles.stepName}>
          {layer.number}
          <span className="visually-hidden"> {words.layerName(layer.key)}</span>
        </span>
      ) : (
        <span className={styles.stepName}>{label?.name ?? stepName(event.step)}</span>
      )}
      <span>{words.decision(event.decision)}</span>
      {detail && !off ? <span className={detailClass(event.decision)}>{detail}</span> : null}
      <StepMs durationMs={event.durationMs} />
    </li>
  );
}

/** The step that ended the lane, its detail in full, then what followed it ("then: …"). */
function EndStep({ event, plan }: { event: StoredEvent; plan: LanePlan<StoredEvent> }) {
  const words = useWords();
  const { t, stepName } = words;
  // A stop says who stopped it; the bank's end is drawn as an end, and said to screen readers.
  const marker =
    plan.endKind === 'bank'
      ? undefined
      : t(event.decision === 'lost' ? 'stoppedByLost' : 'stoppedBy', { stopper: stopperOf(event.step, words) });
  const listSeparator = useTranslations('lab.console')('listSeparator');
  const notReached = plan.notReached.map((off) => t('offStep', { name: stepName(off.step) })).join(listSeparator);
  return (
    <li
      className={`${styles.step} ${styles.end}`}
      style={{ borderColor: colourOf(event.step) }}
      title={notReached ? t('notReached', { steps: notReached }) : undefined}
      data-step={event.step}
      data-decision={event.decision}
      data-end="true"
    >
      <span className={styles.endLine}>
        {marker ? (
          <span className={styles.endMarker}>{marker}</span>
        ) : (
          <span className={styles.endMarker}>
            <span className="visually-hidden">{t('endedAtBank')}</span>
          </span>
        )}
        <span className={styles.stepName}>{stepName(event.step)}</span>
        <span>{words.decision(event.decision)}</span>
        {event.detail ? <span className={styles.stepDetail}>{words.reason(event)}</span> : null}
        <StepMs durationMs={event.durationMs} />
      </span>
      {plan.consequences.length > 0 ? (
        <ol className={styles.consequences} aria-label={t('then')}>
          {plan.consequences.map((after) => (
            <li key={after.id} data-step={after.step} data-decision={after.decision} data-consequence="true">
              <span className={styles.then}>{t('thenPrefix')}</span>
              {stepName(after.step)} {words.decision(after.decision)}
              {after.detail ? (
                <>
                  {t('colon')}
                  {words.reason(after)}
                </>
              ) : null}
            </li>
          ))}
        </ol>
      ) : null}
    </li>
  );
}
