import { z } from 'zod';
import { env } from '@/lib/env';
import { readJsonBody } from '@/lib/http/body';
import { json, problem, withProblems } from '@/lib/http/problem';
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
  if (body.value.lab && !env().LAB_ENABLED) {
    return problem(400, 'lab-disabled', 'The lab is turned off', {
      detail: 'This server does not accept lab settings (LAB_ENABLED=false).',
      errors: [{ field: 'lab', message: 'is not accepted: the lab is turned off' }],
    });
  }
  const order = await createOrder(body.value);
  return json(order, 201, { location: `/api/orders/${order.orderNo}` });
});
