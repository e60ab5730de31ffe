// What the business code tells about a payment, through OpenTelemetry's API alone: a span for each payment
// and each defence, and a span event for each decision (stopped, passed, held, taken over, fenced, lost,
// released, kept). With nothing registered the API is a no-op and nothing here costs more than a call. Who
// listens is not this code's business: the lab registers a processor that turns the spans into its
// timeline's lanes (lib/lab/timeline-spans.ts), and OTEL_EXPORTER_OTLP_ENDPOINT sends the same spans to any
// OTLP collector (Jaeger, Tempo). Pure of I/O: the attribute names and the small helpers that write them.
import { createHash } from 'node:crypto';
import {
  type Attributes,
  context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { ATTR_REASON, type Decision, type Reason, type ReasonKey, type Step } from './decisions.ts';

export { reason } from './decisions.ts';
export type { Decision, Reason, ReasonKey, Span, Step };

/** The name of this code's tracer: a processor that reads only the business code's spans looks for it. */
export const TRACER_NAME = 'pay-once';

/** The global tracer (OpenTelemetry's API: a no-op until a provider is registered globally). */
const globalTracer = trace.getTracer(TRACER_NAME);

// On globalThis: Next.js bundles instrumentation.ts (where the lab registers) apart from the routes.
const registry = globalThis as unknown as { payOnceTracer?: Tracer };

/**
 * A provider for this code's spans alone, leaving the global one as it is (the lab without a collector:
 * nobody reads Next.js's spans, and Next.js instruments every request once a global provider is set, which
 * costs a payment about 40 µs of CPU: bench/results.md). Undefined: the global tracer again.
 */
export function setPaymentTracerProvider(provider: TracerProvider | undefined): void {
  registry.payOnceTracer = provider?.getTracer(TRACER_NAME);
}

/** The attributes this code writes (its own namespace; HTTP's are the semantic conventions, on the routes). */
export const ATTR = {
  /** The order a span is about. */
  orderNo: 'payonce.order_no',
  /** How the request came: browser, api, reconciler, worker. */
  channel: 'payonce.channel',
  /** The request's id (its X-Request-Id): a lane of the lab's timeline starts at a span that has one. */
  requestId: 'payonce.request_id',
  /** The app instance that ran it (INSTANCE_NAME). */
  instance: 'payonce.instance',
  /** The caller, hashed (a session id or X-Client-Id is never written). */
  caller: 'payonce.caller',
  /** The order's owner, hashed. */
  owner: 'payonce.order.owner',
  /** The defence a span is, or the layer a step names. */
  layer: 'payonce.layer',
  /** The step a decision was taken at: a layer, or request, bank, reconcile, outcome, receipt. */
  step: 'payonce.step',
  /** Why, as a message key of messages/<locale>/timeline.json; its values as `payonce.reason.<name>`. */
  reason: ATTR_REASON,
  /** The fencing token a claim holds. */
  fence: 'payonce.fence',
  /** What the request was answered (the Answer's kind), and the payment's status when there is one. */
  outcome: 'payonce.outcome',
  status: 'payonce.payment.status',
} as const;

/**
 * Records a decision on `span`: an event named after it, with the step and the reason as attributes. The reason
 * may come as a function that makes it: made only when somebody listens (with nothing registered, a payment's ten
 * or so reasons, their objects and their strings, cost about 8 µs of CPU for nothing: decision 038).
 */
export function decide(span: Span, step: Step, decision: Decision, reasonOrMaker?: Reason | (() => Reason)): void {
  if (!span.isRecording()) return;
  const attributes: Attributes = { [ATTR.step]: step };
  const why = typeof reasonOrMaker === 'function' ? reasonOrMaker() : reasonOrMaker;
  if (why) {
    attributes[ATTR.reason] = why.key;
    const { values } = why;
    if (values) for (const name in values) attributes[reasonAttribute(name)] = values[name];
  }
  // Dated on one clock for every span: the SDK dates an event from its span's start, which it takes from
  // Date.now() (whole milliseconds), so two spans' events less than a millisecond apart could swap places, and
  // a lane would show a key released before the layer that stopped its request.
  span.addEvent(decision, attributes, performance.timeOrigin + performance.now());
}

/** The reason an event carries, read back from its attributes (the lab's processor, a test's receiver). */
export function reasonOf(attributes: Attributes | undefined): Reason | undefined {
  const key = attributes?.[ATTR.reason];
  if (typeof key !== 'string') return undefined;
  let values: Record<string, string> | undefined;
  for (const attribute in attributes) {
    const value = attributes[attribute];
    const name = valueName(attribute);
    if (value === undefined || name === undefined) continue;
    values ??= {};
    values[name] = String(value);
  }
  return values ? { key: key as ReasonKey, values } : { key: key as ReasonKey };
}

// A reason's values are few names (a fence, a status, a charge), written and read on every decision: each name's
// attribute is made once, and so is each attribute's name read back. A string made anew for every decision, then
// used as a property's name, is hashed and looked up in V8's table of names each time (about 0.2 µs a decision).
const attributeOfName = new Map<string, string>();
const nameOfAttribute = new Map<string, string | null>();
const VALUE_PREFIX = `${ATTR_REASON}.`;

/** The attribute a reason's value `name` is written under: `payonce.reason.<name>`. */
function reasonAttribute(name: string): string {
  let attribute = attributeOfName.get(name);
  if (attribute === undefined) {
    attribute = `${VALUE_PREFIX}${name}`;
    if (attributeOfName.size < 1_000) attributeOfName.set(name, attribute);
  }
  return attribute;
}

/** The value's name an attribute carries (`payonce.reason.<name>`), or undefined when it is not one. */
function valueName(attribute: string): string | undefined {
  let name = nameOfAttribute.get(attribute);
  if (name === undefined) {
    name = attribute.startsWith(VALUE_PREFIX) ? attribute.slice(VALUE_PREFIX.length) : null;
    if (nameOfAttribute.size < 1_000) nameOfAttribute.set(attribute, name);
  }
  return name ?? undefined;
}

/** A span that is a child of `parent` (or of whatever span is active: the route's, when Next.js traces it). */
export function startSpan(name: string, options: SpanOptions, parent?: Span): Span {
  const parentContext = parent ? trace.setSpan(context.active(), parent) : context.active();
  return (registry.payOnceTracer ?? globalTracer).startSpan(name, options, parentContext);
}

/** A caller as a span names it: a short hash, so no trace and no screen ever shows anyone's session id. */
export function hashCaller(scope: string): string {
  let hashed = hashes.get(scope);
  if (hashed === undefined) {
    hashed = createHash('sha256').update(scope).digest('base64url').slice(0, 12);
    // A caller pays many times (an API client, a session): its hash is kept, for up to 10,000 callers.
    if (hashes.size >= 10_000) hashes.clear();
    hashes.set(scope, hashed);
  }
  return hashed;
}
const hashes = new Map<string, string>();
