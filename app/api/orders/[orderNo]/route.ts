import { otherMethods } from '@/lib/http/methods';
import { json, problem, withProblems } from '@/lib/http/problem';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { findOrderView } from '@/lib/payments/orders';

export const GET = withProblems(
  async (_request: Request, context: RouteContext<'/api/orders/[orderNo]'>): Promise<Response> => {
    const { orderNo } = await context.params;
    const order = OrderNoSchema.safeParse(orderNo).success ? await findOrderView(orderNo) : null;
    if (!order) return problem(404, 'order-not-found', 'Order not found', { detail: `No order ${orderNo}.` });
    return json(order);
  },
);

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
