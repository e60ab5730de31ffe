import 'server-only';
// The defences of a refund, read from the same switches as a payment's (defences-for.ts): which run, in the
// article's order. Layer 1 (the page's one-time token) has no part here: a refund's form carries its request id,
// which plays that part and more. This is the one place that knows every refund defence and hands each what it
// needs of the others, so that no defence imports another.
import type { CallerScope } from '../session.ts';
import { decide, reason } from '../telemetry/spans.ts';
import { refundBankKeyFor } from './bank-key/defence.ts';
import { type Defence, stopped } from './defence.ts';
import { LAYERS, type Layer, type Layers, type RefundKeyStrategy } from './layers.ts';
import {
  outcomeFromRefund,
  parseRefundOutcome,
  REFUNDS_ENDPOINT,
  type RefundAnswer,
  type RefundAttempt,
  type Refunded,
  type RefundOutcome,
  refundReference,
} from './refund.ts';
import { refundClaimDefence, unguardedRefund } from './refund-claim/defence.ts';
import { recordRefund, recordRefundOutcome } from './refund-claim/store.ts';
import { type KeyedAttempt, keyDefence } from './request-key/defence.ts';
import { refundKeyFor, shortKey } from './request-key/key-strategy.ts';
import { fingerprintOf, requestKeyName } from './request-key/record.ts';

type RefundDefence = Defence<RefundAttempt, RefundAnswer, RefundOutcome>;

/**
 * A refund's identity, as its key strategy makes it of the request (the article's first detail): the refund's key
 * (`refundKey`), its reference at the bank and for its dedup row, and layer 2's key (the caller's scope, the
 * payload's fingerprint: the same identity for another amount is a mismatch).
 */
export function refundIdentity(
  strategy: RefundKeyStrategy,
  request: {
    caller: CallerScope;
    orderNo: string;
    amountCents: number;
    requestId: string;
    params: Record<string, string | number>;
  },
): Pick<RefundAttempt, 'refundKey' | 'reference' | 'key'> {
  const refundKey = refundKeyFor(strategy, request);
  return {
    refundKey,
    reference: refundReference(request.orderNo, refundKey),
    key: {
      name: requestKeyName(request.caller, refundKey),
      fingerprint: fingerprintOf({ orderNo: request.orderNo, amountCents: request.amountCents }),
      // The lanes name the right strategy as the payments' right one ("business": no strategy shown).
      shown: { key: shortKey(refundKey), strategy: strategy === 'requestId' ? 'business' : strategy },
    },
  };
}

/** The refund's attempt, as layer 2 sees it: bound to POST /api/refunds, known to the bank by its reference. */
function keyedRefund(attempt: RefundAttempt): KeyedAttempt<RefundOutcome, Refunded> {
  return {
    ...attempt,
    endpoint: REFUNDS_ENDPOINT,
    merchantRef: attempt.reference,
    outcomeOf: (refunded) => outcomeFromRefund(attempt.orderNo, refunded),
    parseOutcome: parseRefundOutcome,
    recovery: {
      reconcile: () => attempt.recovery.reconcile(),
      askBankAfterTakeover: (query, seen) => attempt.recovery.askBankAfterTakeover(query, seen),
    },
  };
}

/**
 * Not a layer: the refund recorded as asked for, once per identity, with its amount. The same identity for another
 * amount is not the same refund: refused, saying the amount it was recorded with.
 */
const theRefundsRecord: RefundDefence = {
  name: 'refund',
  async guard(attempt, next) {
    const { orderNo, refundKey, amountCents, caller } = attempt;
    const recorded = await recordRefund({ orderNo, refundKey }, amountCents, caller);
    return recorded === amountCents ? next() : stopped({ kind: 'amount_mismatch', refundAmountCents: recorded });
  },
};

/** The refund's bank key (layer 5): its reference, never the order's. */
const refundBankKey: RefundDefence = {
  layer: 'bankKey',
  async guard({ reference, span }, next) {
    const key = refundBankKeyFor(reference);
    decide(span, 'bankKey', 'sent', () => reason('bankKeySent', { key }));
    return next({ toBank: { idempotencyKey: key, keyedBy: 'bankKey' } });
  },
};

function defencesOf(layers: Layers) {
  const { stateMachine, uniqueConstraint, bankKey } = layers;
  const database = stateMachine || uniqueConstraint;
  const requestKey = layers.requestKey
    ? keyDefence<RefundAttempt, RefundAnswer, RefundOutcome, Refunded>(
        {
          databaseDecides: database,
          bankKey,
          // Layer 2 alone found the refund at the bank: written on the refund's row with no claim to check.
          recordOnOrder: async (outcome, reference) => {
            await recordRefundOutcome(refOf(reference), outcome, undefined, NO_LAYERS);
          },
        },
        keyedRefund,
      )
    : undefined;
  return {
    requestKey,
    database: database
      ? refundClaimDefence({ stateMachine, uniqueConstraint, bankKey })
      : unguardedRefund({ bankKeyOf: bankKey ? refundBankKeyFor : undefined }),
    bankKey: bankKey ? refundBankKey : undefined,
  };
}

/** The defences one refund attempt runs, in order: 2 request key, (its record), 3 + 4 its claim, 5 the bank's key. */
export function refundDefencesFor(layers: Layers, attempt: RefundAttempt): RefundDefence[] {
  for (const layer of LAYERS) if (!layers[layer] && layer !== 'token') decide(attempt.span, layer as Layer, 'off');
  const made = defencesOf(layers);
  return [made.requestKey, theRefundsRecord, made.database, made.bankKey].filter(
    (defence): defence is RefundDefence => defence !== undefined,
  );
}

const NO_LAYERS = { stateMachine: false, uniqueConstraint: false };

/** A refund's identity from its reference, `<order no>/<refund key>` (an order number has no slash). */
function refOf(reference: string) {
  const slash = reference.indexOf('/');
  return { orderNo: reference.slice(0, slash), refundKey: reference.slice(slash + 1) };
}
