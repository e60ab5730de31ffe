import { z } from 'zod';
import { readJsonBody } from '@/lib/http/body';
import { json, withProblems } from '@/lib/http/problem';
import { LabSettingsPatchSchema } from '@/lib/lab/settings';
import { AmountCentsSchema } from '@/lib/payments/order-no';
import { createOrder } from '@/lib/payments/orders';

const CreateOrderSchema = z.strictObject({
  amountCents: AmountCentsSchema.optional(),
  /** Lab settings for this order only, so scenarios with different settings can run side by side. */
  lab: LabSettingsPatchSchema.optional(),
});

export const POST = withProblems(async (request: Request): Promise<Response> => {
  const body = await readJsonBody(request, CreateOrderSchema, { allowEmpty: true });
  if (!body.ok) return body.response;
  const order = await createOrder(body.value);
  return json(order, 201, { location: `/api/orders/${order.orderNo}` });
});
