import 'server-only';
// The lab's switches, read in one place: which defences a payment runs, in the article's order. Everything
// else (the pipeline, each defence) only runs the list it is given. A switch that is off is marked "off" on
// the request's lane here, so the lab shows the duplicate that layer would have stopped.
import { decide } from '../telemetry/spans.ts';
import { bankKeyDefence } from './bank-key/defence.ts';
import { checkoutTokenDefence } from './checkout-token/defence.ts';
import { type Attempt, type Defence, stopped } from './defence.ts';
import { LAYERS, type Layer, type Layers } from './layers.ts';
import { orderClaimDefence, unguardedOrder } from './order-claim/defence.ts';
import { recordUnguarded } from './order-claim/store.ts';
import { answerOfKey, requestKeyDefence } from './request-key/defence.ts';

/** Not a layer: the amount an API caller states must be the order's (checked once layer 2 has answered its retries). */
const theOrdersAmount: Defence = {
  name: 'amount',
  async guard({ statedAmountCents, amountCents }, next) {
    return statedAmountCents !== undefined && statedAmountCents !== amountCents
      ? stopped({ kind: 'amount_mismatch', orderAmountCents: amountCents })
      : next();
  },
};

/**
 * Each layer's defence under these switches (undefined: off). A Record over the layers, so a new layer in
 * LAYERS (layers.ts) does not compile until it has its defence here. Layers 3 and 4 are one claim: one
 * defence stands for both (one statement when both are on), and layer 4's entry is then empty. This is the
 * one place that knows every defence: what one needs of another (layer 1 the key's answer, layer 2 how a
 * charge it found is written on the order) is handed to it here, so no defence imports another.
 */
function layerDefences(layers: Layers): Record<Layer, Defence | undefined> {
  const { bankKey, stateMachine, uniqueConstraint } = layers;
  const database = stateMachine || uniqueConstraint;
  return {
    token: layers.token ? checkoutTokenDefence({ keyAnswers: layers.requestKey ? answerOfKey : undefined }) : undefined,
    requestKey: layers.requestKey
      ? requestKeyDefence({ databaseDecides: database, bankKey, recordOnOrder: recordUnguarded })
      : undefined,
    stateMachine: stateMachine ? orderClaimDefence({ stateMachine, uniqueConstraint, bankKey }) : undefined,
    uniqueConstraint:
      uniqueConstraint && !stateMachine ? orderClaimDefence({ stateMachine, uniqueConstraint, bankKey }) : undefined,
    bankKey: layers.bankKey ? bankKeyDefence : undefined,
  };
}

/**
 * The defences of one combination of switches, made once: a defence keeps nothing of a payment (what it needs
 * comes with the attempt), so every payment under the same switches shares them (32 combinations at most).
 */
function defencesOf(layers: Layers): Record<Layer, Defence | undefined> {
  let key = 0;
  for (const [bit, layer] of LAYERS.entries()) if (layers[layer]) key |= 1 << bit;
  let made = madeFor.get(key);
  if (!made) {
    made = layerDefences(layers);
    madeFor.set(key, made);
  }
  return made;
}
const madeFor = new Map<number, Record<Layer, Defence | undefined>>();

/** Which layers apply to a request whatever the switches: layer 1 only to a request from a page. */
const APPLIES: Record<Layer, (attempt: Attempt) => boolean> = {
  token: (attempt) => attempt.fromPage,
  requestKey: () => true,
  stateMachine: () => true,
  uniqueConstraint: () => true,
  bankKey: () => true,
};

/**
 * The defences one attempt runs, in order: 1 token, 2 request key, (the order's amount), 3 + 4 the database's
 * claim, 5 the bank's key. The switched-off layers that would have applied are marked "off" on its lane.
 */
export function defencesFor(layers: Layers, attempt: Attempt): Defence[] {
  const byLayer = defencesOf(layers);
  for (const layer of LAYERS) if (!layers[layer] && APPLIES[layer](attempt)) decide(attempt.span, layer, 'off');
  const database = byLayer.stateMachine ?? byLayer.uniqueConstraint ?? unguardedOrder;
  return [byLayer.token, byLayer.requestKey, theOrdersAmount, database, byLayer.bankKey].filter(
    (defence): defence is Defence =>
      defence !== undefined && (defence.layer === undefined || APPLIES[defence.layer](attempt)),
  );
}

/**
 * Whether these switches claim the order in the database (layer 3 or 4): then that claim's statement can check
 * who pays the order, and at what amount, where the order was not read first (pay.ts, decision 036).
 */
export function claimsTheOrder(layers: Layers): boolean {
  return layers.stateMachine || layers.uniqueConstraint;
}
