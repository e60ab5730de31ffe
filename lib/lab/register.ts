import 'server-only';
// The lab attaches itself to the business code, which knows nothing of it: it becomes the payments' policy
// source (which defences run, the faults), it reads the spans (the timeline's lanes), and it watches the
// Redis server (a failover or restart on the timeline). An OTLP exporter, when OTEL_EXPORTER_OTLP_ENDPOINT
// is set, gets the same spans, the lab on or off. Called once per process: Next.js's register()
// (instrumentation.ts), the worker, a test's setup.
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type IdGenerator, TracerProvider as SdkTracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { type Env, env } from '../env.ts';
import { isExposed } from '../http/presenter.ts';
import { randomHex } from '../instance.ts';
import { setPolicySource } from '../payments/policy.ts';
import { watchRedisServer } from '../redis.ts';
import { setPaymentTracerProvider } from '../telemetry/spans.ts';
import { LaneTracerProvider } from './lane-tracer.ts';
import { type Crash, killThisProcess, labPolicySource } from './policy.ts';
import { watchPrimary } from './redis-failover.ts';
import { TimelineSpanProcessor } from './timeline-spans.ts';

type Registered = { flush?: () => Promise<void> };
const registry = globalThis as unknown as { payOnceLab?: Registered };

type Config = Pick<Env, 'LAB_ENABLED' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'> & { HOST?: string };

/**
 * Attaches the lab (when LAB_ENABLED) and the OTLP exporter (when configured) to this process. Once.
 * `config`: the configuration to read instead of env()'s (a test's setup, which must not fix env() early).
 */
export function registerLab(options: { crash?: Crash; config?: Config } = {}): void {
  if (registry.payOnceLab) return;
  const { LAB_ENABLED, OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_SERVICE_NAME, HOST } = options.config ?? env();
  const timeline = LAB_ENABLED ? new TimelineSpanProcessor() : undefined;
  if (otlp) {
    // With a collector, OpenTelemetry's SDK records every span (Next.js's for the routes too), for the collector
    // and the timeline alike; the active span follows the request through async calls, so every span joins its
    // request's trace.
    const exporter = new OTLPTraceExporter({ url: new URL('v1/traces', withSlash(otlp)).href });
    const provider = new SdkTracerProvider({
      spanProcessors: [...(timeline ? [timeline] : []), new BatchSpanProcessor({ exporter })],
      idGenerator: POOLED_IDS,
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: OTEL_SERVICE_NAME }),
    });
    registry.payOnceLab = { flush: () => provider.forceFlush() };
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  } else if (timeline) {
    // The lab alone reads only this code's spans, through its own tracer (lane-tracer.ts): Next.js's stay the
    // API's no-ops, and Next.js, which sees no provider, does not trace its requests at all.
    registry.payOnceLab = { flush: () => timeline.forceFlush() };
    setPaymentTracerProvider(new LaneTracerProvider(timeline));
  } else {
    registry.payOnceLab = {};
  }
  if (!LAB_ENABLED) return;
  const flush = () => flushLab();
  // A room (the app exposed): a crash fault of an attendee's stops their attempt, not everybody's app.
  setPolicySource(labPolicySource(options.crash ?? killThisProcess, flush, HOST !== undefined && isExposed(HOST)));
  watchRedisServer(watchPrimary);
}

/** Publishes every span the lab has not yet published (before a crash fault kills the process). */
export async function flushLab(): Promise<void> {
  await registry.payOnceLab?.flush?.();
}

/**
 * Trace and span ids cut from the process's pool of random bytes. The SDK's own generator calls Math.random
 * four times a trace id, and Next.js wraps Math.random (its check for I/O in a prerender) on every call: about
 * 5 µs of a span's 11 here. An id of zeros is invalid in W3C Trace Context: drawn again (odds 2^-64).
 */
const POOLED_IDS: IdGenerator = {
  generateTraceId: () => nonZero(16),
  generateSpanId: () => nonZero(8),
};

function nonZero(bytes: number): string {
  for (;;) {
    const id = randomHex(bytes);
    if (!/^0+$/.test(id)) return id;
  }
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
