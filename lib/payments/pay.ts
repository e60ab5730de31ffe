import 'server-only';
// The payment pipeline: one request, top to bottom, through the enabled defences in the article's order,
// then the bank, then the outcome. Used by the checkout page (server action) and by POST /api/payments.
//
//   1. one-time token      (browser only)   a double submit from the same page stops here
//   2. request key          Redis            retries of the same intent get the first outcome
//   3. state machine        PostgreSQL       any duplicate for the order: the claim is a conditional update
//   4. unique constraint    PostgreSQL       the last millimetre, in the same statement as 3
//   5. bank key             the bank         the bank returns its first charge for the order's key
//   6. the bank             charges every call it receives that its fence lets through
//   7. every claim hears the bank's verdict, the innermost first: completed, released, or kept in doubt
//
// Each defence is one module in lib/defences/ that keeps one contract (lib/defences/defence.ts): it stops
// a duplicate with the answer that duplicate gets, passes, or holds a claim; it knows when to complete,
// release or keep its claim. Which defences run is the lab's choice, read in one place (defences-for.ts);
// this file only runs the list. Every claim carries a fencing token, and the bank refuses a stale one, so an
// attempt that stalled past its lease cannot charge after another took over. A claim found dead is taken
// over and settled by asking the bank (reconcile.ts), never by guessing.
import { getDb } from '../db.ts';
import type { Answer, Attempt, Hold, ToBank } from '../defences/defence.ts';
import { defencesFor } from '../defences/defences-for.ts';
import { attemptKeyOf } from '../defences/request-key.ts';
import { env } from '../env.ts';
import { instanceName, newAttemptId } from '../instance.ts';
import { reason, type TimelineReason } from '../lab/reasons.ts';
import { type Faults, LAYERS, type LabSettings, type Layers } from '../lab/settings.ts';
import { getLabSettings, getLabSettingsFor, settingsForOrder } from '../lab/settings-store.ts';
import { type Lane, startLane, viewerOf } from '../lab/timeline.ts';
import type { TimelineEvent } from '../lab/timeline-event.ts';
import type { CallerScope } from '../session.ts';
import { callBank } from './bank-call.ts';
import { recallOrderFacts } from './order-facts.ts';
import { mayUse } from './orders.ts';
import type { RaceHook } from './race-points.ts';
import { askBankAfterTakeover, reconcileOrder } from './reconcile.ts';

export type { Answerer } from '../defences/defence.ts';

export type PayRequest = {
  orderNo: string;
  /** API callers state the amount; it must be the order's. The browser pays the order's amount. */
  amountCents?: number;
  caller: CallerScope;
  channel: 'browser' | 'api';
  /**
   * The one-time token the checkout page received when it loaded. An API caller acting for a screen
   * (a mobile app: GET /api/tokens when the screen opens) may send one too; a service call has none.
   */
  checkoutToken?: string;
  /** API: the caller's Idempotency-Key. The browser's key is the order number (the business identity). */
  idempotencyKey?: string;
  /** The parameters as submitted (the form's fields, the JSON body): the lab's `paramHash` keys hash them. */
  params?: Record<string, string | number>;
  /** The key the checkout form minted for this submit: the lab's `perSubmit` keys. */
  submitKey?: string;
  /** The id the route gave this request (its X-Request-Id): its lane on the timeline. */
  requestId?: string;
};

export type PayResult = { requestId: string } & Answer;

export type PayOptions = {
  /** How long layer 2 keeps a final outcome (and a claim, for a retry to find). */
  resultTtlSeconds: number;
  /** The lab's "crash after charge" fault: by default the process dies on the spot (SIGKILL). */
  crash: () => never;
  publish?: (events: TimelineEvent[]) => void;
  /** The clock leases and the bank's statement are judged by (the race explorer's is virtual). */
  now: () => number;
  /** Tests only: waits at the pipeline's named points (the race explorer's scheduler). */
  at?: RaceHook;
  /** Tests only: this attempt's own faults, over the order's (one attempt crashes, its retry does not). */
  faults?: Partial<Faults>;
  /** Tests only: new attempt ids (the race explorer's carry the life of the process it simulates). */
  attemptIds?: () => string;
};

export function defaultPayOptions(): PayOptions {
  return {
    resultTtlSeconds: env().REQUEST_KEY_RESULT_TTL_SECONDS,
    crash: () => {
      process.kill(process.pid, 'SIGKILL');
      throw new Error('unreachable: the process was killed');
    },
    now: Date.now,
  };
}

export async function pay(request: PayRequest, options: PayOptions = defaultPayOptions()): Promise<PayResult> {
  const lane = startLane(
    {
      orderNo: request.orderNo,
      channel: request.channel,
      instance: instanceName(),
      viewers: [viewerOf(request.caller)],
    },
    options.publish,
    request.requestId,
  );
  const answer = await payOnce(request, options, lane);
  lane.mark('outcome', answer.kind, summarize(answer));
  lane.flush();
  return { requestId: lane.requestId, ...answer };
}

/** The article's pipeline, for one attempt: the defences in order, the bank once, the verdict to every claim. */
async function payOnce(request: PayRequest, options: PayOptions, lane: Lane): Promise<Answer> {
  // 0. The order (only its owner, and the sessions it let in, may pay it: anyone else is told it does not
  //    exist), and the lab settings that apply to it: its owner's lab, or the global one; its own win.
  const order = await orderFor(request, lane);
  if (!order) return { kind: 'order_not_found' };
  const { layers } = order.settings;
  const received = { channel: request.channel, cents: order.amountCents, defences: defencesOn(layers) };
  lane.mark('request', 'received', reason('received', received));
  const attempt = attemptOf(request, order, options, lane);

  // 1-5. The defences, in the article's order. A duplicate is answered by the first one that stops it.
  const claimed = await claimInOrder(defencesFor(layers, attempt), attempt);
  if (claimed.kind === 'stopped') return claimed.answer;
  const { holds, toBank } = claimed;

  // Between the claims and the bank: the lab's pause or crash, and the claims checked again after a pause.
  const faults = { ...order.settings.faults, ...options.faults };
  const lost = await stillHeld(holds, attempt, faults, options.crash);
  if (lost) return unwind(holds, lost);
  await options.at?.('pay.bank');

  // 5 + 6. The bank, once, under the innermost claim's fencing token.
  const fence = holds.findLast((hold) => hold.fence)?.fence;
  const { verdict, answer } = await callBank(attempt, { fence, toBank, faults });
  // The lab's "crash after charge": the process dies here, having charged the card and recorded nothing.
  if (verdict.kind === 'settled' && faults.crashAfterCharge) options.crash();

  // 7. Every claim hears the verdict, the innermost first (the database before the key). A failure to
  //    record happens after the money moved: nothing is released; the reconciler settles from the bank.
  for (const hold of [...holds].reverse()) await hold.settle(verdict);
  return answer;
}

type OrderToPay = { amountCents: number; owner: string | null; settings: LabSettings };

/** The order, if this caller may pay it, with the lab settings it runs under. */
async function orderFor({ orderNo, caller }: PayRequest, lane: Lane): Promise<OrderToPay | undefined> {
  // Its facts (amount, owner) from Redis, kept there when it was created with no settings of its own: the
  // database's first statement is then the claim. Without them, or for a caller other than its owner, the row.
  const [facts, globalSettings] = await Promise.all([recallOrderFacts(orderNo), getLabSettings()]);
  const known = facts && (facts.owner === null || facts.owner === caller) ? { ...facts, lab: null } : undefined;
  const order = known ?? (await readOrder(orderNo));
  if (!order || !mayUse({ payers: [], ...order }, caller)) return undefined;
  if (order.owner) lane.showTo(order.owner);
  const ownersLab = order.owner?.startsWith('s.') ? await getLabSettingsFor(order.owner) : globalSettings;
  return { amountCents: order.amountCents, owner: order.owner, settings: settingsForOrder(ownersLab, order.lab) };
}

async function readOrder(orderNo: string) {
  // Raw SQL on the hot path: the model query costs Prisma a query compilation per call (bench/results.md).
  const [order] = await getDb().$queryRaw<
    Array<{ amountCents: number; lab: unknown; owner: string | null; payers: string[] }>
  >`SELECT amount_cents AS "amountCents", lab, owner, payers FROM orders WHERE order_no = ${orderNo}`;
  return order;
}

/** One attempt, as every defence sees it: the request, its layer 2 key, and the recovery path they may call. */
function attemptOf(request: PayRequest, order: OrderToPay, options: PayOptions, lane: Lane): Attempt {
  const { orderNo, caller } = request;
  const { now, at, publish, attemptIds = newAttemptId } = options;
  const leaseMs = order.settings.claims.leaseMs;
  // Layer 2's key, as the lab's key strategy makes it (the article's first detail: only `business` holds).
  const key = attemptKeyOf(caller, order.settings.keys.strategy, {
    orderNo,
    idempotencyKey: request.idempotencyKey,
    params: request.params ?? { orderNo },
    submitKey: request.submitKey,
    payload: { orderNo, amountCents: request.amountCents ?? order.amountCents },
  });
  return {
    orderNo,
    amountCents: order.amountCents,
    statedAmountCents: request.amountCents,
    caller,
    fromPage: request.channel === 'browser' || request.checkoutToken !== undefined,
    checkoutToken: request.checkoutToken,
    namedIntent: request.idempotencyKey !== undefined,
    attemptId: attemptIds(),
    key,
    leaseMs,
    resultTtlSeconds: options.resultTtlSeconds,
    now,
    at,
    lane,
    recovery: {
      reconcile: (payer) => reconcileOrder(orderNo, { leaseMs, payer, now, at, publish, attemptIds }),
      askBankAfterTakeover: (query, seen) => askBankAfterTakeover(query, seen, { now, at }),
    },
  };
}

type Claimed = { kind: 'stopped'; answer: Answer } | { kind: 'holding'; holds: Hold[]; toBank?: ToBank };

/**
 * Runs the defences in order. The first that stops the attempt answers it, and every claim held so far hears
 * that answer (a duplicate's outcome completes them; anything else gives them back). A defence that fails
 * (the database is down) gives back what was held before it, then the error goes on: nothing has moved yet.
 */
async function claimInOrder(defences: ReturnType<typeof defencesFor>, attempt: Attempt): Promise<Claimed> {
  const holds: Hold[] = [];
  let toBank: ToBank | undefined;
  for (const defence of defences) {
    const claim = await defence.claim(attempt).catch(async (error: unknown) => {
      await unwind(holds, { kind: 'failed_retryable', reason: 'a defence failed before the bank' }).catch(() => {});
      throw error;
    });
    if (claim.kind === 'stopped') return { kind: 'stopped', answer: await unwind(holds, claim.answer) };
    if (claim.kind === 'held') holds.push(claim.hold);
    else toBank = claim.toBank ?? toBank;
  }
  return { kind: 'holding', holds, toBank };
}

/** This attempt stops before the bank with `answer`: every claim it holds hears it, the innermost first. */
async function unwind(holds: Hold[], answer: Answer): Promise<Answer> {
  let said = answer;
  for (const hold of [...holds].reverse()) said = await hold.stopped(said);
  return said;
}

/**
 * The lab's faults between the claims and the bank: a pause (a GC pause, an overloaded host), or a crash.
 * An attempt that paused for half its lease renews its claims, and stops if it lost one (it was taken over):
 * the answer it then gives. A fresh one cannot have lost them. Either way the bank checks the token: this is
 * only early. The pause strikes an attempt that claimed the order, not one recovering a stalled attempt's.
 */
async function stillHeld(
  holds: Hold[],
  attempt: Attempt,
  faults: Faults,
  crash: () => never,
): Promise<Answer | undefined> {
  const { lane, now, leaseMs } = attempt;
  const claimedAt = now();
  const stallMs = holds.some((hold) => hold.tookOver) ? 0 : faults.stallBeforeBankMs;
  if (stallMs > 0) {
    lane.mark('request', 'stalled', reason('stalled', { stallMs, leaseMs }));
    lane.flush();
    await new Promise((resolve) => setTimeout(resolve, stallMs));
  }
  if (faults.crashBeforeCharge) crash();
  await attempt.at?.('pay.beforeBank');
  if (now() - claimedAt <= leaseMs / 2 && stallMs === 0) return undefined;
  const renewedAt = now();
  for (const hold of [...holds].reverse()) {
    const lost = await hold.renew(renewedAt);
    if (lost) return lost;
  }
  return undefined;
}

/** The switches a request ran under, as the room's view counts them ("defences on: 0 1 2 3 4 5"): "0 1 2", "none". */
function defencesOn(layers: Layers): string {
  const on = (['pendingUi', ...LAYERS] as const).flatMap((layer, number) => (layers[layer] ? [number] : []));
  return on.length > 0 ? on.join(' ') : 'none';
}

function summarize(result: Answer): TimelineReason {
  switch (result.kind) {
    case 'completed':
      return reason('outcomeCompleted', { status: result.outcome.status });
    case 'duplicate':
      return reason('outcomeDuplicate', { status: result.outcome.status, answeredBy: result.answeredBy });
    case 'in_progress':
      return reason('outcomeInProgress', { answeredBy: result.answeredBy });
    case 'already_submitted':
      return reason('outcomeAlreadySubmitted');
    case 'mismatch':
      return reason('outcomeMismatch');
    case 'failed_retryable':
      return reason('outcomeFailedRetryable');
    case 'order_not_found':
      return reason('outcomeNoOrder');
    case 'amount_mismatch':
      return reason('outcomeAmountMismatch', { cents: result.orderAmountCents });
  }
}
