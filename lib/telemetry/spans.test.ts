// A payment's decisions, read back from its spans in the order they were taken, whichever span each is on.
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { decide, reason, reasonOf, TRACER_NAME } from './spans.ts';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer(TRACER_NAME);
afterAll(() => provider.shutdown());

const ms = ([seconds, nanos]: [number, number]) => seconds * 1_000 + nanos / 1e6;

describe('decisions on spans', () => {
  it('are dated on one clock: a decision taken later is later, on any span', () => {
    // The SDK dates a span's start from Date.now(), in whole milliseconds: a span begun just before a
    // millisecond ends looks up to 1 ms older than it is. Make that 3 ms for the span of the later decision.
    const stateMachine = tracer.startSpan('defence stateMachine');
    const realNow = Date.now.bind(Date);
    const skewed = vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3);
    const requestKey = tracer.startSpan('defence requestKey');
    skewed.mockRestore();
    decide(stateMachine, 'stateMachine', 'stopped', reason('dbStillProcessing', { layer: 'stateMachine' }));
    decide(requestKey, 'requestKey', 'released', reason('keyReleased'));
    stateMachine.end();
    requestKey.end();
    const events = exporter
      .getFinishedSpans()
      .flatMap((span) => span.events)
      .sort((a, b) => ms(a.time) - ms(b.time));
    expect(events.map((event) => event.name)).toEqual(['stopped', 'released']);
    expect(events[0]?.attributes).toMatchObject({
      'payonce.step': 'stateMachine',
      'payonce.reason': 'dbStillProcessing',
      'payonce.reason.layer': 'stateMachine',
    });
  });

  it('carry their reason as attributes, read back to the same reason', () => {
    const span = tracer.startSpan('defence requestKey');
    decide(span, 'requestKey', 'claimed', () => reason('keyClaimed', { key: 'k-1', strategy: 'business', fence: 7 }));
    decide(span, 'requestKey', 'completed', reason('keyCompleted'));
    decide(span, 'requestKey', 'claimed', () => reason('keyClaimed', { key: 'k-2', strategy: 'paramHash', fence: 8 }));
    span.end();
    const [first, bare, second] = exporter.getFinishedSpans().at(-1)?.events ?? [];
    expect(first?.attributes).toEqual({
      'payonce.step': 'requestKey',
      'payonce.reason': 'keyClaimed',
      'payonce.reason.key': 'k-1',
      'payonce.reason.strategy': 'business',
      'payonce.reason.fence': '7',
    });
    expect(reasonOf(first?.attributes)).toEqual(reason('keyClaimed', { key: 'k-1', strategy: 'business', fence: 7 }));
    expect(reasonOf(bare?.attributes)).toEqual({ key: 'keyCompleted' });
    expect(reasonOf(second?.attributes)).toEqual({
      key: 'keyClaimed',
      values: { key: 'k-2', strategy: 'paramHash', fence: '8' },
    });
    // Attributes of its own namespace that are not a reason's values are not read as values.
    expect(reasonOf({ 'payonce.reason': 'keyLeft', 'payonce.reasonable': 'no', 'payonce.step': 'x' })).toEqual({
      key: 'keyLeft',
    });
    expect(reasonOf({ 'payonce.step': 'request' })).toBeUndefined();
  });

  it('cost nothing and record nothing when no tracer provider is registered', () => {
    const span = trace.getTracer(TRACER_NAME).startSpan('payment');
    expect(span.isRecording()).toBe(false);
    decide(span, 'request', 'received');
    span.end();
  });
});
