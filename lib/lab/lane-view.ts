// How the lab draws one lane of the timeline: its path through the layers, in the layers' order, up to the
// step that ended it, and what happened after that step as its consequence. Pure and browser-safe.
//
// A request marks its steps in the order its code runs them, which is not always the layers' order: layers
// 3 and 4 are one SQL statement, so a layer that is off ("4 Unique constraint off") is marked before the
// statement's verdict ("3 State machine stopped"); and after a stop the request still lets go of what it
// held ("2 Request key released"). Read in marking order, such a lane seems to go on past the layer that
// stopped it. Here it ends there.
import type { TimelineEvent, TimelineStep } from './timeline-event.ts';

/** The order a request meets the steps in: the layers 0-5, then the bank, the reconciler, the outcome. */
export const STEP_ORDER: TimelineStep[] = [
  'request',
  'pendingUi',
  'token',
  'requestKey',
  'stateMachine',
  'uniqueConstraint',
  'bankKey',
  'bank',
  'reconcile',
  'outcome',
];

/** The decisions that end a request at that step: the layer answered for it (or it lost its claim there). */
const STOPPING = new Set(['stopped', 'lost']);

/**
 * The lanes of payment and refund requests end with an outcome (a queue's refund message too); the others (gateway,
 * worker, reconciler) are done when drawn.
 */
const PAYMENT_CHANNELS = new Set<TimelineEvent['channel']>(['browser', 'api', 'queue']);

export type LanePlan<E extends TimelineEvent> = {
  /** The request as it arrived ("received", with the defences it ran under), when marked. */
  received?: E;
  /** The steps it went through, in the layers' order, up to and including `end`. */
  path: E[];
  /** The step that ended it: the layer that stopped it, or the bank's last word. */
  end?: E;
  /** How it ended there: a layer stopped it, or it reached the bank. */
  endKind?: 'stopped' | 'bank';
  /** What happened after the end, in time order: the claims it let go of, the outcome it stored. */
  consequences: E[];
  /** The layers marked "off" beyond the end: the request never got there. */
  notReached: E[];
  /** The final outcome, once the request has answered. */
  outcome?: E;
  /**
   * The step at which the lane ended (its `data-ends-at`): the stopping layer, 'bank', 'outcome' (an answer
   * given before any layer or the bank, e.g. no such order), the last step of a gateway, worker or reconciler
   * lane; undefined while a payment request is still running.
   */
  endsAt?: TimelineStep;
};

function rankOf(step: TimelineStep): number {
  const rank = STEP_ORDER.indexOf(step);
  return rank === -1 ? 0 : rank;
}

/**
 * Orders a lane's events: each step's first event (its entry) by the layers' order; every later event of a
 * step already met keeps its time order, after the furthest step reached when it happened.
 */
export function orderSteps<E extends TimelineEvent>(events: E[]): E[] {
  const seen = new Set<TimelineStep>();
  let furthest = -1;
  return events
    .map((event, index) => {
      const rank = rankOf(event.step);
      if (seen.has(event.step)) return { event, key: Math.max(furthest, rank) + 0.5, index };
      seen.add(event.step);
      furthest = Math.max(furthest, rank);
      return { event, key: rank, index };
    })
    .sort((a, b) => a.key - b.key || a.index - b.index)
    .map(({ event }) => event);
}

/** A lane's events (in the order they were marked) as the lab draws them. */
export function planLane<E extends TimelineEvent>(events: E[]): LanePlan<E> {
  const channel = events[0]?.channel;
  // The final outcome is the pipeline's last mark; an "outcome late" before it is a step like any other.
  const outcome = events.findLast((event) => event.step === 'outcome' && event.decision !== 'late');
  const received = events.find((event) => event.step === 'request' && event.decision === 'received');
  const marked = events.filter((event) => event !== outcome);
  const shown = (list: E[]) => orderSteps(list).filter((event) => event !== received);

  if (channel === undefined || !PAYMENT_CHANNELS.has(channel)) {
    return { received, path: shown(marked), consequences: [], notReached: [], outcome, endsAt: events.at(-1)?.step };
  }
  // The end: the first layer that stopped the request, else the bank's last word.
  let endIndex = marked.findIndex((event) => STOPPING.has(event.decision));
  const endKind = endIndex === -1 ? 'bank' : 'stopped';
  if (endIndex === -1) endIndex = marked.findLastIndex((event) => event.step === 'bank');
  const end = marked[endIndex];
  if (!end) {
    return {
      received,
      path: shown(marked),
      consequences: [],
      notReached: [],
      outcome,
      endsAt: outcome ? 'outcome' : undefined,
    };
  }
  // Up to the end, in the layers' order. A layer marked "off" that comes after the end in that order was
  // never reached (layer 4, when layer 3 stopped the request); anything else marked before the end stays before it.
  const sorted = shown(marked.slice(0, endIndex + 1));
  const cut = sorted.indexOf(end);
  const after = sorted.slice(cut + 1);
  const notReached = after.filter((event) => event.decision === 'off');
  return {
    received,
    path: [...sorted.slice(0, cut), ...after.filter((event) => event.decision !== 'off'), end],
    end,
    endKind,
    consequences: marked.slice(endIndex + 1),
    notReached,
    outcome,
    endsAt: end.step,
  };
}

/** The defences a request ran under, as its "received" mark names them: "0 1 2", "none". */
export function defencesOf(received: TimelineEvent | undefined): string | undefined {
  const key = received?.reason?.key;
  const given = key === 'received' || key === 'refundReceived' ? received?.reason?.values?.defences : undefined;
  return given !== undefined ? String(given) : /defences on: (.+)$/.exec(received?.detail ?? '')?.[1];
}

/**
 * When each lane began, relative to the first lane of the same order (ms): the order of a double click's two
 * requests, or of a retry and its first attempt, beyond the clock's seconds. `firsts`: each lane's first event.
 */
export function offsetsByOrder(
  firsts: Array<Pick<TimelineEvent, 'requestId' | 'orderNo' | 'at'>>,
): Map<string, number> {
  const start = new Map<string, number>();
  for (const { orderNo, at } of firsts) start.set(orderNo, Math.min(at, start.get(orderNo) ?? at));
  return new Map(firsts.map(({ requestId, orderNo, at }) => [requestId, at - (start.get(orderNo) ?? at)]));
}

/**
 * A receipt-worker step, as lib/events/receipts.ts words it: "delivered message 1712-0 (charge ch_…): sent".
 * `result`: "sent", "duplicate", "skipped" (an older event's English words: "receipt already sent (…)").
 * The worker's lane is one "send receipt" message (one is published each time an order is recorded PAID: twice
 * for an order charged twice with layer 3 off); each step of it is one delivery of that message.
 */
export function readDelivery(event: TimelineEvent): { redelivered: boolean; chargeId?: string; result: string } {
  // Its reason's values, when it has one (receipts.ts); else the English words of an older event.
  const given = event.reason?.key === 'receiptDelivery' ? event.reason.values : undefined;
  if (given) {
    const charge = given.charge === undefined || given.charge === 'none' ? undefined : String(given.charge);
    return {
      redelivered: given.delivery === 'again',
      chargeId: charge,
      result: String(given.result ?? event.decision),
    };
  }
  const match = /^(re)?delivered message \S+?(?: \(charge (\S+)\))?: (.*)$/.exec(event.detail ?? '');
  return { redelivered: match?.[1] === 're', chargeId: match?.[2], result: match?.[3] ?? event.decision };
}
