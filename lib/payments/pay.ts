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
// Each defence is one folder in lib/defences/ that keeps one contract (lib/defences/defence.ts): a guard
// around the rest of the payment. It stops a duplicate with the answer that duplicate gets, or passes the
// attempt on, holding a claim or not; when the rest comes back it completes, releases or keeps its claim.
// Which defences run is the lab's choice, read in one place (defences-for.ts); this file only runs the list.
// Every claim carries a fencing token, and the bank refuses a stale one, so an attempt that stalled past its
// lease cannot charge after another took over. A claim found dead is taken over and settled by asking the
// bank (reconcile.ts), never by guessing.
import { getDb } from '../db.ts';
import type { Answer, Attempt, Ending, Lease, Reconciled } from '../defences/defence.ts';
import { claimsTheOrder, defencesFor } from '../defences/defences-for.ts';
import { defencesOn } from '../defences/layers.ts';
import type { RaceHook } from '../defences/race-points.ts';
import { env } from '../env.ts';
import { instanceName, newAttemptId, newRequestId } from '../instance.ts';
import type { CallerScope } from '../session.ts';
import { ATTR, decide, hashCaller, type Reason, reason, type Span, startSpan } from '../telemetry/spans.ts';
import type { BankFaults } from './bank.ts';
import { callBank } from './bank-call.ts';
import { FAILED_BEFORE_BANK, faultContext, guarded, type Handed, stillHeld } from './guarded.ts';
import { recallOrderFacts } from './order-facts.ts';
import { mayUse } from './orders.ts';
import { type PaymentPolicy, policySource } from './policy.ts';
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
  /** The clock leases and the bank's statement are judged by (the race explorer's is virtual). */
  now: () => number;
  /** Tests only: waits at the pipeline's named points (the race explorer's scheduler). */
  at?: RaceHook;
  /** Tests only: this attempt's own bank faults, over the order's (one attempt's bank times out, not its retry's). */
  bankFaults?: Partial<BankFaults>;
  /** Tests only: new attempt ids (the race explorer's carry the life of the process it simulates). */
  attemptIds?: () => string;
};

export function defaultPayOptions(): PayOptions {
  return { resultTtlSeconds: env().REQUEST_KEY_RESULT_TTL_SECONDS, now: Date.now };
}

export async function pay(request: PayRequest, options: PayOptions = defaultPayOptions()): Promise<PayResult> {
  const requestId = request.requestId ?? newRequestId();
  const span = startSpan('payment', {
    attributes: {
      [ATTR.orderNo]: request.orderNo,
      [ATTR.channel]: request.channel,
      [ATTR.requestId]: requestId,
      [ATTR.instance]: instanceName(),
      [ATTR.caller]: hashCaller(request.caller),
    },
  });
  try {
    const answer = await payOnce(request, options, span);
    decide(span, 'outcome', answer.kind, () => summarize(answer));
    span.setAttribute(ATTR.outcome, answer.kind);
    if ('outcome' in answer) span.setAttribute(ATTR.status, answer.outcome.status);
    return { requestId, ...answer };
  } finally {
    span.end();
  }
}

/** The article's pipeline, for one attempt: the defences in order, the bank once, the verdict to every claim. */
async function payOnce(request: PayRequest, options: PayOptions, span: Span): Promise<Answer> {
  // 0. The order (only its owner, and the sessions it let in, may pay it: anyone else is told it does not
  //    exist), and the policy it runs under (the lab's choice of defences and faults, when the lab is on). With
  //    the lab off, an API call that states its amount is checked by the order's claim instead (decision 036).
  const order = await orderFor(request, span);
  if (!order) return { kind: 'order_not_found' };
  const { layers } = order.policy;
  decide(span, 'request', 'received', () =>
    reason('received', { channel: request.channel, cents: order.amountCents, defences: defencesOn(layers) }),
  );
  const attempt = attemptOf(request, order, options, span);

  // 1-5. The defences, in the article's order, each around the rest: a duplicate is answered by the first one
  //    that stops it; the others pass it on, and hear how the rest ended on the way back.
  const end = await guarded(
    defencesFor(layers, attempt),
    attempt,
    (handed) => atTheBank(attempt, order, options, handed),
    FAILED_BEFORE_BANK,
  );
  if (end.kind === 'stopped' && end.failure !== undefined) throw end.failure;
  return told(end.answer, order.policy);
}

/**
 * What a duplicate of a finished payment is told (the article's second detail): the first outcome, as every
 * defence answers it; or, under the lab's wrong answer, "already submitted" and nothing more.
 */
function told(answer: Answer, policy: PaymentPolicy): Answer {
  if (answer.kind !== 'duplicate' || policy.duplicateAnswer === 'firstResult') return answer;
  return { kind: 'duplicate_refused', answeredBy: answer.answeredBy };
}

/**
 * 5 + 6, inside every defence: the fault point (a pause, a crash) with the claims checked again if the attempt
 * was away for half its lease, then the bank, once, under the innermost claim's fencing token.
 */
async function atTheBank(
  attempt: Attempt,
  order: OrderToPay,
  options: PayOptions,
  { leases, toBank }: Handed,
): Promise<Ending> {
  const lost = await stillHeld(leases, attempt, order.policy.faults, FAILED_BEFORE_BANK);
  if (lost) return lost;
  if (options.at) await options.at('pay.bank');
  // The order's faults as they are, unless a test gives this attempt its own (a spread is a copy V8 makes slowly).
  const faults = options.bankFaults ? { ...order.policy.bank, ...options.bankFaults } : order.policy.bank;
  const { verdict, answer } = await callBank(attempt, { lease: leases.at(-1), toBank, faults });
  if (verdict.kind !== 'settled') return { kind: 'banked', verdict, answer };
  // The point after a charge: the lab's "crash after charge" dies here, having charged and recorded nothing.
  const crash = order.policy.faults('pay.afterCharge', faultContext(attempt, leases));
  if (crash) await crash;
  // 7. On the way back out every claim hears the verdict, the innermost first (the database before the key), and
  //    what failed after it: the downstream notification, which throws only when the lab says so. Money moved
  //    either way; what each claim then does is the release rule's (lib/defences/release.ts).
  const failure = await notifyDownstream(attempt, leases, order.policy);
  if (failure === undefined) return { kind: 'banked', verdict, answer };
  const failed = { kind: 'failed_after_bank', reason: 'A step after the bank failed.' } as const;
  return { kind: 'banked', verdict, answer: failed, failure };
}

/** The downstream system told of the bank's answer (the fault point `pay.notify`): what it threw, if anything. */
async function notifyDownstream(attempt: Attempt, leases: Lease[], policy: PaymentPolicy): Promise<unknown> {
  try {
    const thrown = policy.faults('pay.notify', faultContext(attempt, leases));
    if (thrown) await thrown;
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    decide(attempt.span, 'request', 'failed', () => reason('notifyFailed', { message }));
    return error;
  }
}

/** The order as the payment goes in: its amount, and the policy it runs under. */
type OrderToPay = { amountCents: number; policy: PaymentPolicy; checkAtClaim: boolean };

/**
 * The order, if this caller may pay it, with the policy it runs under. Or, for an API call that states its
 * amount under a policy known without reading the order (the lab off; the lab on, for a service paying an
 * order made without settings of its own), the stated amount, to be checked by the
 * database's claim: the owner and the amount never change, so the claim's own statement can check them, and the
 * payment saves the round trip that would read them first (bench/results.md, section 1).
 */
async function orderFor(request: PayRequest, span: Span): Promise<OrderToPay | undefined> {
  const atClaim = await checkedAtClaim(request);
  if (atClaim) return atClaim;
  const { orderNo, caller } = request;
  // Its facts (amount, owner) from Redis, kept there when it was created with no settings of its own: the
  // database's first statement is then the claim. Without them, or for a caller other than its owner, the row.
  const facts = await recallOrderFacts(orderNo);
  const known = facts && (facts.owner === null || facts.owner === caller) ? { ...facts, lab: null } : undefined;
  const order = known ?? (await readOrder(orderNo));
  if (!order || !mayUse({ payers: [], ...order }, caller)) return undefined;
  if (order.owner) span.setAttribute(ATTR.owner, hashCaller(order.owner));
  const policy = await policySource().forOrder({ orderNo, owner: order.owner, lab: order.lab });
  return { amountCents: order.amountCents, policy, checkAtClaim: false };
}

/**
 * An API call that states its amount, without a page's token, under a policy its policy source tells without
 * reading the order, which claims the order in the database (layer 3 or 4): nothing before that claim depends on
 * the order, so it is not read first. Layer 2 keys it by what it states, as it would anyway.
 */
async function checkedAtClaim(request: PayRequest): Promise<OrderToPay | undefined> {
  const { amountCents, checkoutToken, caller, orderNo } = request;
  if (amountCents === undefined || checkoutToken !== undefined) return undefined;
  const policy = await policySource().forCaller?.(caller, orderNo);
  if (!policy || !claimsTheOrder(policy.layers)) return undefined;
  return { amountCents, policy, checkAtClaim: true };
}

/**
 * For an attempt checked at its claim, on the recovery path (its claim was refused, or its key is held): the
 * order read first, so that nobody learns of, or takes over, an order that is not theirs to pay at that amount.
 */
async function refusal(orderNo: string, caller: CallerScope, amountCents: number): Promise<Reconciled | undefined> {
  const order = await readOrder(orderNo);
  if (!order || !mayUse(order, caller)) return { kind: 'gone' };
  if (order.amountCents !== amountCents) return { kind: 'amountMismatch', orderAmountCents: order.amountCents };
  return undefined;
}

async function readOrder(orderNo: string) {
  // Raw SQL on the hot path: the model query costs Prisma a query compilation per call (bench/results.md).
  const [order] = await getDb().$queryRaw<
    Array<{ amountCents: number; lab: unknown; owner: string | null; payers: string[] }>
  >`SELECT amount_cents AS "amountCents", lab, owner, payers FROM orders WHERE order_no = ${orderNo}`;
  return order;
}

/** One attempt, as every defence sees it: the request, its intent, and the recovery path they may call. */
function attemptOf(request: PayRequest, order: OrderToPay, options: PayOptions, span: Span): Attempt {
  const { orderNo, caller } = request;
  const { now, at, attemptIds = newAttemptId } = options;
  const { leaseMs } = order.policy;
  return {
    orderNo,
    amountCents: order.amountCents,
    statedAmountCents: request.amountCents,
    caller,
    fromPage: request.channel === 'browser' || request.checkoutToken !== undefined,
    checkoutToken: request.checkoutToken,
    namedIntent: request.idempotencyKey !== undefined,
    attemptId: attemptIds(),
    // What the request says about its intent: layer 2 makes its key of it, as the lab's key strategy says.
    intent: {
      strategy: order.policy.keyStrategy,
      orderNo,
      idempotencyKey: request.idempotencyKey,
      params: request.params ?? { orderNo },
      submitKey: request.submitKey,
    },
    leaseMs,
    release: order.policy.release,
    resultTtlSeconds: options.resultTtlSeconds,
    now,
    at,
    span,
    checkAtClaim: order.checkAtClaim,
    recovery: {
      reconcile: async (payer) => {
        const refused = order.checkAtClaim ? await refusal(orderNo, caller, order.amountCents) : undefined;
        return refused ?? reconcileOrder(orderNo, { leaseMs, payer, now, at, attemptIds, parent: span });
      },
      askBankAfterTakeover: (query, seen) => askBankAfterTakeover(query, seen, { now, at }),
    },
  };
}

function summarize(result: Answer): Reason {
  switch (result.kind) {
    case 'completed':
      return reason('outcomeCompleted', { status: result.outcome.status });
    case 'duplicate':
      return reason('outcomeDuplicate', { status: result.outcome.status, answeredBy: result.answeredBy });
    case 'in_progress':
      return reason('outcomeInProgress', { answeredBy: result.answeredBy });
    case 'duplicate_refused':
      return reason('outcomeDuplicateRefused', { answeredBy: result.answeredBy });
    case 'already_submitted':
      return reason('outcomeAlreadySubmitted');
    case 'mismatch':
      return reason('outcomeMismatch');
    case 'failed_retryable':
      return reason('outcomeFailedRetryable');
    case 'failed_after_bank':
      return reason('outcomeFailedAfterBank');
    case 'order_not_found':
      return reason('outcomeNoOrder');
    case 'amount_mismatch':
      return reason('outcomeAmountMismatch', { cents: result.orderAmountCents });
  }
}
