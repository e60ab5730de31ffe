// What a checkout page reports to the lab's timeline about what only its browser saw (layer 0). Pure: the
// route validates with it, the API reference documents it.
import { z } from 'zod';
import english from '../../messages/en/timeline.json' with { type: 'json' };
import { OrderNoSchema } from '../payments/order-no.ts';

/** `POST /api/lab/timeline` `{ "orderNo": "ord_…", "event": "click-swallowed" }`. */
export const BrowserEventSchema = z.strictObject({
  orderNo: OrderNoSchema,
  /** The pending UI swallowed a click (or Enter) while a payment of this order was in flight. */
  event: z.literal('click-swallowed', { message: 'must be "click-swallowed"' }),
});
export type BrowserEvent = z.infer<typeof BrowserEventSchema>;

/** The swallowed click's step on the timeline, in English words (its reason `clickSwallowed`). */
export const SWALLOWED_CLICK_DETAIL = english.reasons.clickSwallowed;
