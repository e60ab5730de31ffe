import type { NextRequest } from 'next/server';
import { callerOf } from '@/lib/http/caller';
import { otherMethods } from '@/lib/http/methods';
import { json, problem, say, withProblems } from '@/lib/http/problem';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderView } from '@/lib/payments/orders';

/** The order and its card statement, for the caller that owns it (or was let in): anyone else gets a 404. */
export const GET = withProblems(
  async (request: NextRequest, context: RouteContext<'/api/orders/[orderNo]'>): Promise<Response> => {
    const { orderNo } = await context.params;
    const who = callerOf(request);
    const caller = who.ok ? who.caller : undefined;
    const order = OrderNoSchema.safeParse(orderNo).success ? await findOrderView(orderNo, caller) : null;
    if (!order)
      return problem(404, 'order-not-found', 'Order not found', { detail: say('details.orderNotFound', { orderNo }) });
    return json(order);
  },
);

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
