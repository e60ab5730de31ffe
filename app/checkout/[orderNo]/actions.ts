'use server';
// The Pay button's server action: parse, run the same pipeline as the API, map the result to a state.
// A public POST endpoint like any other: everything is validated again here.
import { cookies } from 'next/headers';
import { z } from 'zod';
import { issueCheckoutToken } from '@/lib/defences/checkout-token';
import { env } from '@/lib/env';
import { faultyService } from '@/lib/http/faults';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderOutcome } from '@/lib/payments/orders';
import { pay } from '@/lib/payments/pay';
import { SESSION_COOKIE, SessionIdSchema, sessionScope } from '@/lib/session';
import type { PayState } from './pay-state';

const PayFormSchema = z.object({
  orderNo: OrderNoSchema,
  token: z.string().max(128, { message: 'is not a checkout token' }),
});

export async function payOrder(_previous: PayState, formData: FormData): Promise<PayState> {
  const parsed = PayFormSchema.safeParse({ orderNo: formData.get('orderNo'), token: formData.get('token') ?? '' });
  if (!parsed.success) {
    const errors = Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0]), issue.message]));
    return { status: 'invalid', errors };
  }
  const { orderNo, token } = parsed.data;
  const session = (await cookies()).get(SESSION_COOKIE)?.value;
  if (!session || !SessionIdSchema.safeParse(session).success) {
    return { status: 'invalid', errors: { token: 'your session has expired: reload the page' } };
  }
  const caller = sessionScope(session);

  try {
    const result = await pay({ orderNo, caller, channel: 'browser', checkoutToken: token || undefined });
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
