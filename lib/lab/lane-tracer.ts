import 'server-only';
// The lab's own tracer, for a process where the lab is the spans' only reader (no OTLP collector configured):
// it records what the timeline reads of a span (its name's scope, attributes, events, parent, start) and
// nothing else, and hands each span to the timeline's processor as OpenTelemetry's SDK would (onStart, onEnd).
// Why not the SDK here: its generality (samplers, limits, attribute sanitizing, links, status, resource,
// a processor chain) cost a payment about as much CPU as the timeline itself, for nobody to read
// (docs/decisions/035-the-labs-own-tracer.md). With a collector, the SDK records every span, for the
// collector and the timeline alike (register.ts).
import {
  type Attributes,
  type Context,
  context,
  type HrTime,
  type Span,
  type SpanContext,
  type SpanOptions,
  type TimeInput,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { randomHex } from '../instance.ts';

/** What a processor of the lab's reads of a span: the SDK's spans have it too. */
export type RecordedSpan = {
  readonly instrumentationScope: { readonly name: string };
  readonly attributes: Attributes;
  readonly events: ReadonlyArray<{ readonly name: string; readonly time: HrTime; readonly attributes?: Attributes }>;
  readonly startTime: HrTime;
  readonly parentSpanContext?: SpanContext;
  spanContext(): SpanContext;
};

/** What the tracer hands its spans to: the timeline's processor (timeline-spans.ts). */
export type SpanReader = { onStart(span: RecordedSpan): void; onEnd(span: RecordedSpan): void };

const toHrTime = (ms: number): HrTime => {
  const seconds = Math.floor(ms / 1_000);
  return [seconds, Math.round((ms - seconds * 1_000) * 1e6)];
};

/** Now, on the clock decide() dates decisions by (lib/telemetry/spans.ts): the epoch in fractional ms. */
const now = () => performance.timeOrigin + performance.now();

/** A time as OpenTelemetry's API may give it: epoch ms, performance.now() ms, a Date, or an HrTime. */
function timeOf(input: TimeInput | undefined): HrTime {
  if (input === undefined) return toHrTime(now());
  if (Array.isArray(input)) return input as HrTime;
  if (input instanceof Date) return toHrTime(input.getTime());
  // Below the process's start, a number is a performance.now() reading; above it, epoch milliseconds.
  return toHrTime(input < performance.timeOrigin ? performance.timeOrigin + input : input);
}

class LaneSpan implements Span, RecordedSpan {
  readonly events: Array<{ name: string; time: HrTime; attributes?: Attributes }> = [];
  readonly startTime: HrTime;
  private ended = false;

  constructor(
    readonly instrumentationScope: { readonly name: string },
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly attributes: Attributes,
    startTime: TimeInput | undefined,
    private readonly reader: SpanReader,
  ) {
    this.startTime = timeOf(startTime);
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: Attributes[string]): this {
    if (!this.ended && value !== undefined) this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key of Object.keys(attributes)) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    const dated =
      typeof attributesOrTime === 'number' || Array.isArray(attributesOrTime) || attributesOrTime instanceof Date;
    const attributes = dated ? undefined : (attributesOrTime as Attributes | undefined);
    this.events.push({ name, time: timeOf(dated ? (attributesOrTime as TimeInput) : time), attributes });
    return this;
  }

  // The timeline reads neither links, a status nor a span's name: nothing to keep.
  addLink(): this {
    return this;
  }

  addLinks(): this {
    return this;
  }

  setStatus(): this {
    return this;
  }

  updateName(): this {
    return this;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.reader.onEnd(this);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  recordException(exception: unknown, time?: TimeInput): void {
    const message = exception instanceof Error ? exception.message : String(exception);
    this.addEvent('exception', { 'exception.message': message }, time);
  }
}

class LaneTracer implements Tracer {
  private readonly scope: { readonly name: string };

  constructor(
    name: string,
    private readonly reader: SpanReader,
  ) {
    this.scope = { name };
  }

  startSpan(_name: string, options: SpanOptions = {}, parent: Context = context.active()): Span {
    const parentContext = options.root ? undefined : trace.getSpanContext(parent);
    const spanContext: SpanContext = {
      traceId: parentContext?.traceId ?? randomHex(16),
      spanId: randomHex(8),
      traceFlags: TraceFlags.SAMPLED,
    };
    const attributes: Attributes = { ...options.attributes };
    const span = new LaneSpan(this.scope, spanContext, parentContext, attributes, options.startTime, this.reader);
    this.reader.onStart(span);
    return span;
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest.at(-1) as F;
    const options = (rest.length > 1 ? rest[0] : {}) as SpanOptions;
    const parent = (rest.length > 2 ? rest[1] : context.active()) as Context;
    const span = this.startSpan(name, options, parent);
    return context.with(trace.setSpan(parent, span), () => fn(span)) as ReturnType<F>;
  }
}

/** A provider whose every tracer hands its spans to `reader`. */
export class LaneTracerProvider implements TracerProvider {
  constructor(private readonly reader: SpanReader) {}

  getTracer(name: string): Tracer {
    return new LaneTracer(name, this.reader);
  }
}
