import type { NextRequest } from 'next/server';
import { z } from 'zod';
import { issueCheckoutToken } from '@/lib/defences/checkout-token/defence';
import { env } from '@/lib/env';
import { callerOf } from '@/lib/http/caller';
import { otherMethods } from '@/lib/http/methods';
import { json, problem, say, validationProblem, withProblems } from '@/lib/http/problem';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { orderUsableBy } from '@/lib/payments/orders';

const QuerySchema = z.object({ orderNo: OrderNoSchema });

/** Layer 1, for callers other than the checkout page: a one-time token for this order and this caller. */
export const GET = withProblems(async (request: NextRequest): Promise<Response> => {
  const query = QuerySchema.safeParse({ orderNo: request.nextUrl.searchParams.get('orderNo') ?? undefined });
  if (!query.success) return validationProblem(query.error);
  const who = callerOf(request);
  if (!who.ok) return who.response;
  if (!(await orderUsableBy(query.data.orderNo, who.caller))) {
    return problem(404, 'order-not-found', 'Order not found', {
      detail: say('details.orderNotFound', { orderNo: query.data.orderNo }),
    });
  }
  const { token, expiresAt } = await issueCheckoutToken(
    query.data.orderNo,
    who.caller,
    env().CHECKOUT_TOKEN_TTL_SECONDS,
  );
  return json({ token, expiresAt: expiresAt.toISOString() });
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
