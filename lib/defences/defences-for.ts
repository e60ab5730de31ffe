import 'server-only';
// The lab's switches, read in one place: which defences a payment runs, in the article's order. Everything
// else (the pipeline, each defence) only runs the list it is given. A switch that is off is marked "off" on
// the request's lane here, so the lab shows the duplicate that layer would have stopped.
import { decide } from '../telemetry/spans.ts';
import { bankKeyDefence } from './bank-key.ts';
import { checkoutTokenDefence } from './checkout-token.ts';
import { unguardedOrder } from './database-claim.ts';
import { uniqueConstraintDefence } from './dedup.ts';
import { type Attempt, type Defence, PASSED, stop } from './defence.ts';
import { LAYERS, type Layer, type Layers } from './layers.ts';
import { stateMachineAndDedupDefence, stateMachineDefence } from './payment-state.ts';
import { requestKeyDefence } from './request-key.ts';

/** Not a layer: the amount an API caller states must be the order's (checked once layer 2 has answered its retries). */
const theOrdersAmount: Defence = {
  name: 'amount',
  async claim({ statedAmountCents, amountCents }) {
    return statedAmountCents !== undefined && statedAmountCents !== amountCents
      ? stop({ kind: 'amount_mismatch', orderAmountCents: amountCents })
      : PASSED;
  },
};

/**
 * Each layer's defence under these switches (undefined: off). A Record over the layers, so a new layer in
 * LAYERS (layers.ts) does not compile until it has its defence here. Layers 3 and 4 are one
 * statement when both are on: the combined defence stands for both, and layer 4's entry is then empty.
 */
function layerDefences(layers: Layers): Record<Layer, Defence | undefined> {
  const { bankKey } = layers;
  return {
    token: layers.token ? checkoutTokenDefence({ keyAnswers: layers.requestKey }) : undefined,
    requestKey: layers.requestKey
      ? requestKeyDefence({ databaseDecides: layers.stateMachine || layers.uniqueConstraint, bankKey })
      : undefined,
    stateMachine: layers.stateMachine
      ? layers.uniqueConstraint
        ? stateMachineAndDedupDefence({ bankKey })
        : stateMachineDefence({ bankKey })
      : undefined,
    uniqueConstraint:
      layers.uniqueConstraint && !layers.stateMachine ? uniqueConstraintDefence({ bankKey }) : undefined,
    bankKey: layers.bankKey ? bankKeyDefence : undefined,
  };
}

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
  const byLayer = layerDefences(layers);
  for (const layer of LAYERS) if (!layers[layer] && APPLIES[layer](attempt)) decide(attempt.span, layer, 'off');
  const database = byLayer.stateMachine ?? byLayer.uniqueConstraint ?? unguardedOrder;
  return [byLayer.token, byLayer.requestKey, theOrdersAmount, database, byLayer.bankKey].filter(
    (defence): defence is Defence =>
      defence !== undefined && (defence.layer === undefined || APPLIES[defence.layer](attempt)),
  );
}
