// The lab's own tracer records what OpenTelemetry's SDK records of the same spans, as the timeline reads it.
import { context, type Span, type Tracer, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ATTR, decide, reason, TRACER_NAME } from '../telemetry/spans.ts';
import { LaneTracerProvider, type RecordedSpan, type SpanReader } from './lane-tracer.ts';

/** A reader that keeps, for every span at its end, what the timeline's processor reads of it. */
function recorder() {
  const started: RecordedSpan[] = [];
  const ended: RecordedSpan[] = [];
  const reader: SpanReader & SpanProcessor = {
    onStart: (span) => started.push(span),
    onEnd: (span: RecordedSpan | ReadableSpan) => ended.push(span as RecordedSpan),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const named = new Map<string, string>();
  const view = () =>
    ended.map((span) => {
      named.set(span.spanContext().spanId, String(span.attributes[ATTR.layer] ?? 'payment'));
      return {
        scope: span.instrumentationScope.name,
        parent: span.parentSpanContext ? named.get(span.parentSpanContext.spanId) : undefined,
        sameTrace: span.parentSpanContext ? span.parentSpanContext.traceId === span.spanContext().traceId : true,
        attributes: span.attributes,
        events: span.events.map(({ name, attributes }) => ({ name, attributes })),
        started: started.includes(span),
      };
    });
  return { reader, view, ended };
}

/** A payment as pay.ts tells it: its span, a defence's below it, decisions on both, an attribute learnt late. */
function pay(tracer: Tracer): void {
  const payment = tracer.startSpan('payment', { attributes: { [ATTR.orderNo]: 'ord_1', [ATTR.requestId]: 'r1' } });
  const defence = tracer.startSpan(
    'defence requestKey',
    { attributes: { [ATTR.layer]: 'requestKey' } },
    trace.setSpan(context.active(), payment),
  );
  decide(payment, 'request', 'received', reason('received', { channel: 'api', cents: '4200', defences: '4' }));
  decide(defence, 'requestKey', 'passed', reason('keyClaimed'));
  payment.setAttribute(ATTR.owner, 'abc');
  defence.end();
  decide(defence, 'requestKey', 'released'); // after its end: not recorded, by either
  defence.setAttribute(ATTR.outcome, 'late'); // nor this
  decide(payment, 'outcome', 'completed', reason('outcomeCompleted', { status: 'PAID' }));
  payment.setAttribute(ATTR.outcome, 'completed');
  payment.end();
  payment.end(); // a second end is nothing
}

describe('the lab’s own tracer', () => {
  it('records every span, attribute, event and parent the SDK records, in the same order', () => {
    const sdk = recorder();
    const provider = new TracerProvider({ spanProcessors: [sdk.reader] });
    pay(provider.getTracer(TRACER_NAME));
    const lab = recorder();
    pay(new LaneTracerProvider(lab.reader).getTracer(TRACER_NAME));

    expect(lab.view()).toEqual(sdk.view());
    expect(lab.view().map((span) => [span.parent, span.events.length])).toEqual([
      ['payment', 1],
      [undefined, 2],
    ]);
    expect(lab.ended).toHaveLength(2);
  });

  it('dates events on decide()’s clock, after the span’s start', () => {
    const lab = recorder();
    const span = new LaneTracerProvider(lab.reader).getTracer(TRACER_NAME).startSpan('payment');
    const before = performance.timeOrigin + performance.now();
    decide(span, 'request', 'received');
    // On decide()'s clock too: Date.now() may stand apart from it by more than the 5 ms (the wall clock is set by
    // NTP, the monotonic one is not; they were 17 ms apart once, under load).
    span.addEvent('late', performance.timeOrigin + performance.now() + 5);
    span.end();
    const [recorded] = lab.ended;
    const ms = ([seconds, nanos]: readonly [number, number]) => seconds * 1_000 + nanos / 1e6;
    const [received, late] = recorded?.events ?? [];
    expect(ms(recorded?.startTime ?? [0, 0])).toBeLessThanOrEqual(before);
    expect(ms(received?.time ?? [0, 0])).toBeGreaterThanOrEqual(before);
    expect(ms(late?.time ?? [0, 0]) - ms(received?.time ?? [0, 0])).toBeGreaterThan(3);
  });

  it('makes a span active for startActiveSpan’s function, and a child of it joins its trace', () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    onTestFinished(() => context.disable());
    const lab = recorder();
    const tracer = new LaneTracerProvider(lab.reader).getTracer(TRACER_NAME);
    const child = tracer.startActiveSpan('payment', (parent: Span) => {
      expect(trace.getActiveSpan()).toBe(parent);
      const inner = tracer.startSpan('defence', {}, trace.setSpan(context.active(), parent));
      inner.end();
      parent.end();
      return inner;
    });
    const [inner, outer] = lab.ended;
    expect(child).toBe(inner);
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
    expect(inner?.spanContext().traceId).toBe(outer?.spanContext().traceId);
  });
});
