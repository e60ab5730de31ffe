'use server';
// The Pay button's server action: parse, run the same pipeline as the API, map the result to a state.
// A public POST endpoint like any other: everything is validated again here.
import { cookies, headers } from 'next/headers';
import { z } from 'zod';
import { issueCheckoutToken } from '@/lib/defences/checkout-token';
import { env } from '@/lib/env';
import { faultyService } from '@/lib/http/faults';
import { limitRate } from '@/lib/http/rate-limit';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderOutcome } from '@/lib/payments/orders';
import { pay } from '@/lib/payments/pay';
import { sessionScope } from '@/lib/session';
import type { PayState } from './pay-state';

const PayFormSchema = z.object({
  orderNo: OrderNoSchema,
  token: z.string().max(128, { message: 'is not a checkout token' }),
  // Stamped by the form at each submit (epoch ms), as many real forms do: the lab's paramHash keys hash it.
  submittedAt: z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  // Minted by the form at each submit: the lab's perSubmit keys.
  submitKey: z
    .string()
    .regex(/^[A-Za-z0-9-]{8,64}$/, { message: 'is not a submit key' })
    .optional(),
});

/** A form field, or undefined when the form did not send it. */
const field = (formData: FormData, name: string) => formData.get(name) ?? undefined;

export async function payOrder(_previous: PayState, formData: FormData): Promise<PayState> {
  const parsed = PayFormSchema.safeParse({
    orderNo: formData.get('orderNo'),
    token: formData.get('token') ?? '',
    submittedAt: field(formData, 'submittedAt'),
    submitKey: field(formData, 'submitKey'),
  });
  if (!parsed.success) {
    const errors = Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0]), issue.message]));
    return { status: 'invalid', errors };
  }
  const { orderNo, token, submittedAt, submitKey } = parsed.data;
  // A cookie the server did not sign is no session (proxy.ts gives a fresh one to the next page load).
  const session = sessionIdOf(await cookies(), await headers());
  if (!session) {
    return { status: 'invalid', errors: { token: 'your session has expired: reload the page' } };
  }
  const caller = sessionScope(session);
  if (await limitRate('payments', caller)) return { status: 'limited' };

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
    const { requestId } = result;
    switch (result.kind) {
      case 'completed':
        return result.outcome.status === 'PAID'
          ? { status: 'paid', outcome: result.outcome, requestId }
          : { status: 'failed_final', outcome: result.outcome, requestId };
      case 'duplicate':
        return { status: 'replayed', outcome: result.outcome, answeredBy: result.answeredBy, requestId };
      case 'already_submitted':
        return { status: 'already_submitted', current: await findOrderOutcome(orderNo), requestId };
      case 'in_progress':
        return { status: 'in_progress', answeredBy: result.answeredBy, requestId };
      case 'mismatch':
        return { status: 'mismatch', requestId };
      case 'failed_retryable': {
        // Nothing moved; a fresh token lets this page try again.
        const next = await issueCheckoutToken(orderNo, caller, env().CHECKOUT_TOKEN_TTL_SECONDS);
        return { status: 'failed_retryable', reason: result.reason, requestId, token: next.token };
      }
      case 'order_not_found':
      case 'amount_mismatch':
        return { status: 'invalid', errors: { orderNo: 'there is no such order to pay' } };
    }
  } catch (error) {
    const service = faultyService(error);
    if (service) return { status: 'unavailable', service };
    throw error; // unexpected: error.tsx
  }
}
