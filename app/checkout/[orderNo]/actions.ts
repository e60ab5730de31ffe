'use server';
// The Pay button's server action: parse, run the same pipeline as the API, map the result to a state.
// A public POST endpoint like any other: everything is validated again here.
import { cookies, headers } from 'next/headers';
import { z } from 'zod';
import { issueCheckoutToken } from '@/lib/defences/checkout-token/defence';
import { env } from '@/lib/env';
import { faultyService } from '@/lib/http/faults';
import { limitRate } from '@/lib/http/rate-limit';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { AttemptCrashed } from '@/lib/lab/policy';
import { dropsThisAnswer, getOrderLabSettings } from '@/lib/lab/settings-store';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderOutcome, findOrderView } from '@/lib/payments/orders';
import { type PayResult, pay } from '@/lib/payments/pay';
import { type CallerScope, sessionScope } from '@/lib/session';
import type { PayState } from './pay-state';

const PayFormSchema = z.object({
  orderNo: OrderNoSchema,
  token: z.string().max(128),
  // Stamped by the form at each submit (epoch ms), as many real forms do: the lab's paramHash keys hash it.
  submittedAt: z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  // Minted by the form at each submit: the lab's perSubmit keys.
  submitKey: z
    .string()
    .regex(/^[A-Za-z0-9-]{8,64}$/)
    .optional(),
  // "1" when this page had sent its token before (a second click): a refused token then means "already
  // submitted", and otherwise "this page expired". Only the words depend on it.
  resubmit: z.enum(['0', '1']).optional(),
});

/** How long the lab's "drop the response" fault holds the answer back: the page has given up long before. */
const DROPPED_ANSWER_HELD_MS = 60_000;

/** A form field, or undefined when the form did not send it. */
const field = (formData: FormData, name: string) => formData.get(name) ?? undefined;

export async function payOrder(_previous: PayState, formData: FormData): Promise<PayState> {
  // Anyone may post an action with arguments of any shape (`[]`, `{"a":1}`): only a form is ours.
  if (!(formData instanceof FormData)) return { status: 'invalid', reason: 'form' };
  const parsed = PayFormSchema.safeParse({
    orderNo: formData.get('orderNo'),
    token: formData.get('token') ?? '',
    submittedAt: field(formData, 'submittedAt'),
    submitKey: field(formData, 'submitKey'),
    resubmit: field(formData, 'resubmit'),
  });
  // The page sends these fields itself: one it did not make is no form of ours (the page says "reload").
  if (!parsed.success) return { status: 'invalid', reason: 'form' };
  const { orderNo, token, submittedAt, submitKey, resubmit } = parsed.data;
  // A cookie the server did not sign is no session (proxy.ts gives a fresh one to the next page load).
  const session = sessionIdOf(await cookies(), await headers());
  if (!session) {
    return { status: 'invalid', reason: 'sessionExpired' };
  }
  const caller = sessionScope(session);
  if (await limitRate('payments', caller, await headers())) return { status: 'limited' };

  try {
    const result = await pay({
      orderNo,
      caller,
      channel: 'browser',
      checkoutToken: token || undefined,
      // The form's fields as submitted (the token aside: it is layer 1's, and spent by now).
      params: { orderNo, ...(submittedAt === undefined ? {} : { submittedAt }) },
      submitKey,
    });
    if (result.kind === 'order_not_found' || result.kind === 'amount_mismatch') {
      return { status: 'invalid', reason: 'noSuchOrder' };
    }
    // The answer says what the card network recorded, as the statement beside it does; and the lab may
    // drop it on its way back (the payment is done; the page never hears of it). Read leniently: the
    // payment is over, and a database gone now must not turn its answer into "nothing was charged".
    const [order, settings] = await Promise.all([
      findOrderView(orderNo, caller).catch(() => undefined),
      getOrderLabSettings(orderNo).catch(() => undefined),
    ]);
    if (settings?.faults.dropResponse && (await dropsThisAnswer(orderNo).catch(() => false))) {
      await new Promise((resolve) => setTimeout(resolve, DROPPED_ANSWER_HELD_MS));
      return { status: 'no_answer' };
    }
    const answered = { orderNo, caller, resubmit: resubmit === '1', charges: order?.charges.length };
    return await stateOf(result, answered);
  } catch (error) {
    // The lab's crash fault in a room: this attempt stopped where its process would have died. The page hears
    // what it would have heard of a dead process, no answer (a real crash rejects the action: checkout-form.tsx).
    if (error instanceof AttemptCrashed) return { status: 'connection_lost' };
    const service = faultyService(error);
    if (service) return { status: 'unavailable', service };
    throw error; // unexpected: error.tsx
  }
}

/** What the page is told of the pipeline's answer (a found order's: the two "no such order" answers are apart). */
async function stateOf(
  result: Exclude<PayResult, { kind: 'order_not_found' | 'amount_mismatch' }>,
  { orderNo, caller, resubmit, charges }: { orderNo: string; caller: CallerScope; resubmit: boolean; charges?: number },
): Promise<PayState> {
  const { requestId } = result;
  switch (result.kind) {
    case 'completed':
      return result.outcome.status === 'PAID'
        ? { status: 'paid', outcome: result.outcome, requestId, charges }
        : { status: 'failed_final', outcome: result.outcome, requestId, charges };
    case 'duplicate':
      return { status: 'replayed', outcome: result.outcome, answeredBy: result.answeredBy, requestId, charges };
    case 'already_submitted':
      return {
        status: 'already_submitted',
        current: await findOrderOutcome(orderNo),
        resubmit,
        requestId,
        charges,
      };
    case 'in_progress':
      return {
        status: 'in_progress',
        answeredBy: result.answeredBy,
        ...(result.takenOver ? { takenOver: true } : {}),
        requestId,
        charges,
      };
    case 'duplicate_refused':
      return { status: 'refused_duplicate', answeredBy: result.answeredBy, requestId, charges };
    case 'mismatch':
      return { status: 'mismatch', requestId };
    case 'failed_retryable': {
      // Nothing moved (the bank could not be reached; the page says so in its reader's language); a fresh
      // token lets this page try again.
      const next = await issueCheckoutToken(orderNo, caller, env().CHECKOUT_TOKEN_TTL_SECONDS);
      return { status: 'failed_retryable', requestId, token: next.token };
    }
    case 'failed_after_bank': {
      // The card may have been charged; the page may pay again (a retry of the same intent, by its key).
      const next = await issueCheckoutToken(orderNo, caller, env().CHECKOUT_TOKEN_TTL_SECONDS);
      return { status: 'failed_after_bank', requestId, token: next.token, charges };
    }
  }
}
