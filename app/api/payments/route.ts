import type { NextRequest } from 'next/server';
import { z } from 'zod';
import { IdempotencyKeySchema } from '@/lib/defences/request-key-record';
import { readJsonBody } from '@/lib/http/body';
import { callerOf } from '@/lib/http/caller';
import { paymentResponse } from '@/lib/http/payment-response';
import { problem, withProblems } from '@/lib/http/problem';
import { AmountCentsSchema, OrderNoSchema } from '@/lib/payments/order-no';
import { pay } from '@/lib/payments/pay';

const PaymentSchema = z.strictObject({ orderNo: OrderNoSchema, amountCents: AmountCentsSchema });

/**
 * Service-to-service payment. The caller's Idempotency-Key names the intent and stays the same across
 * its retries; the outcome is kept for 24 hours and replayed with `Idempotent-Replayed: true`.
 */
export const POST = withProblems(async (request: NextRequest): Promise<Response> => {
  // 1. The key: required, and well-formed (the IETF draft: 400 when missing or malformed).
  const rawKey = request.headers.get('idempotency-key');
  const key = IdempotencyKeySchema.safeParse(rawKey ?? '');
  if (!key.success) {
    const message = rawKey === null ? 'is required' : (key.error.issues[0]?.message ?? 'is malformed');
    return problem(400, 'idempotency-key', rawKey === null ? 'Idempotency-Key missing' : 'Idempotency-Key malformed', {
      detail: `The Idempotency-Key header ${message}.`,
      errors: [{ field: 'Idempotency-Key', message }],
    });
  }
  // 2. Who is calling: keys are scoped per caller.
  const who = callerOf(request);
  if (!who.ok) return who.response;
  // 3. The body.
  const body = await readJsonBody(request, PaymentSchema);
  if (!body.ok) return body.response;
  // 4. The pipeline: layers 2-4. A service call has no checkout token; a client acting for a screen (a
  //    mobile app) may send the one it got from GET /api/tokens, and layer 1 then checks it too.
  const token = request.headers.get('checkout-token') ?? undefined;
  if (token !== undefined && !/^[A-Za-z0-9_-]{1,128}$/.test(token)) {
    return problem(400, 'checkout-token', 'Checkout-Token malformed', {
      errors: [{ field: 'Checkout-Token', message: 'is not a checkout token' }],
    });
  }
  const result = await pay({
    ...body.value,
    caller: who.caller,
    channel: 'api',
    idempotencyKey: key.data,
    checkoutToken: token,
  });
  return paymentResponse(result);
});
