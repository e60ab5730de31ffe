import 'server-only';
// The lab's timeline, as one reader of the business code's spans: a span processor that turns each request's
// spans (the payment's, its defences', the reconciler's, a receipt's) into one lane, and each span event (a
// decision) into one step of it. A lane starts at a span that carries a request id; the spans below it are
// the same lane. Each step measures the time since the previous one. A request that is still running after
// 250 ms is published as it goes, every 25 ms (so a lab shows where a request waits: a stall, a slow bank),
// and its last steps when its span ends. The processor only reads spans: it never slows down or fails a payment.
import type { Attributes, HrTime } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { ATTR, type Decision, reasonOf, type Step, TRACER_NAME } from '../telemetry/spans.ts';
import type { RecordedSpan, SpanReader } from './lane-tracer.ts';
import { flushTimeline, publishTimelineLanes } from './timeline.ts';
import type { LaneBase, LanePiece, StoredStep } from './timeline-event.ts';

/** How often running lanes are published. */
const TICK_MS = 25;
/**
 * A request younger than this is published when it ends, in one piece: most payments are, under load too (the
 * bench's median payment takes about 110 ms). Older ones, a stall or a slow bank, show where they wait (a lab
 * tab asks every 700 ms).
 */
const LIVE_AFTER_MS = 250;
/** A lane whose span never ended (a bug, or a process that lost track) is forgotten after this long. */
const FORGET_AFTER_MS = 600_000;

type Lane = {
  root: RecordedSpan;
  spans: RecordedSpan[];
  /** How many of each span's events are published already. */
  published: Map<RecordedSpan, number>;
  /** When its previous step happened (ms since the epoch): the next one's duration starts there. */
  last: number;
  startedAt: number;
  ended: boolean;
};

const ms = ([seconds, nanos]: HrTime): number => seconds * 1_000 + nanos / 1e6;

/** A processor of the SDK's (with an OTLP collector) or a reader of the lab's own tracer (lane-tracer.ts). */
export class TimelineSpanProcessor implements SpanProcessor, SpanReader {
  /** Every open span of the timeline's, by its id: the lane it belongs to. */
  private readonly bySpan = new Map<string, Lane>();
  private readonly lanes = new Set<Lane>();
  private ticking: NodeJS.Timeout | undefined;

  onStart(span: RecordedSpan): void {
    if (span.instrumentationScope.name !== TRACER_NAME) return;
    let lane: Lane | undefined;
    if (typeof span.attributes[ATTR.requestId] === 'string') {
      const startedAt = ms(span.startTime);
      lane = { root: span, spans: [], published: new Map(), last: startedAt, startedAt, ended: false };
      this.lanes.add(lane);
    } else {
      const parent = span.parentSpanContext?.spanId;
      lane = parent === undefined ? undefined : this.bySpan.get(parent);
    }
    if (!lane) return;
    lane.spans.push(span);
    this.bySpan.set(span.spanContext().spanId, lane);
    this.ticking ??= setInterval(() => this.publish(false), TICK_MS).unref();
  }

  onEnd(span: RecordedSpan): void {
    const id = span.spanContext().spanId;
    const lane = this.bySpan.get(id);
    if (!lane) return;
    this.bySpan.delete(id);
    if (lane.root === span) lane.ended = true;
  }

  /** Publishes every lane's new steps (before the lab's crash fault kills this process): the lab hears them. */
  async forceFlush(): Promise<void> {
    this.publish(true);
    await flushTimeline();
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    clearInterval(this.ticking);
    this.ticking = undefined;
  }

  private publish(everything: boolean): void {
    const now = performance.timeOrigin + performance.now();
    const pieces: LanePiece[] = [];
    for (const lane of this.lanes) {
      const done = lane.ended || now - lane.startedAt > FORGET_AFTER_MS;
      if (done || everything || now - lane.startedAt >= LIVE_AFTER_MS) {
        const piece = this.newSteps(lane);
        if (piece) pieces.push(piece);
      }
      if (done) this.forget(lane);
    }
    if (pieces.length > 0) publishTimelineLanes(pieces);
    if (this.lanes.size === 0) {
      clearInterval(this.ticking);
      this.ticking = undefined;
    }
  }

  /** The lane's steps not yet published, in the order they happened (undefined: none). */
  private newSteps(lane: Lane): LanePiece | undefined {
    const fresh: Array<{ time: number; name: string; attributes?: Attributes }> = [];
    for (const span of lane.spans) {
      const from = lane.published.get(span) ?? 0;
      const { events } = span;
      for (let i = from; i < events.length; i++) {
        const event = events[i];
        if (event) fresh.push({ time: ms(event.time), name: event.name, attributes: event.attributes });
      }
      lane.published.set(span, events.length);
    }
    if (fresh.length === 0) return undefined;
    fresh.sort((a, b) => a.time - b.time);
    const steps = fresh.map(({ time, name, attributes }): StoredStep => {
      const durationMs = Math.max(0, Math.round(time - lane.last));
      const step = String(attributes?.[ATTR.step] ?? 'request') as Step;
      const why = reasonOf(attributes);
      lane.last = time;
      return why
        ? [durationMs, Math.round(time), step, name as Decision, why]
        : [durationMs, Math.round(time), step, name as Decision];
    });
    // What the steps share, read for each piece: the payment's span learns the order's owner (a viewer) as it goes.
    return { lane: laneBase(lane.root.attributes), steps };
  }

  private forget(lane: Lane): void {
    this.lanes.delete(lane);
    for (const span of lane.spans) this.bySpan.delete(span.spanContext().spanId);
  }
}

/** What every step of a lane shares, from its first span's attributes. */
function laneBase(attributes: Attributes): LaneBase {
  const text = (name: string) => {
    const value = attributes[name];
    return typeof value === 'string' ? value : undefined;
  };
  const viewers = [text(ATTR.caller), text(ATTR.owner)].filter((viewer): viewer is string => viewer !== undefined);
  return {
    requestId: text(ATTR.requestId) ?? '',
    orderNo: text(ATTR.orderNo) ?? '',
    channel: (text(ATTR.channel) ?? 'api') as LaneBase['channel'],
    instance: text(ATTR.instance) ?? '',
    viewers: [...new Set(viewers)],
  };
}
