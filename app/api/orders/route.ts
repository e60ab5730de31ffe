import type { NextRequest } from 'next/server';
import { fingerprintOf, requestKeyName } from '@/lib/defences/request-key-record';
import { env } from '@/lib/env';
import { CreateOrderSchema } from '@/lib/http/api-schemas';
import { readJsonBody } from '@/lib/http/body';
import { callerOf } from '@/lib/http/caller';
import { keyProblem, keyReusedProblem, parseIdempotencyKey } from '@/lib/http/idempotency-key';
import { otherMethods } from '@/lib/http/methods';
import { RETRY_AFTER_SECONDS } from '@/lib/http/payment-response';
import { json, problem, withProblems } from '@/lib/http/problem';
import { createOrder, createOrderOnce, OrderSummarySchema } from '@/lib/payments/orders';

/**
 * Creates an order. With an Idempotency-Key (optional here), at most once per key: a retry gets the first
 * order back (201, the same bytes, Idempotent-Replayed), like POST /api/payments.
 */
export const POST = withProblems(async (request: NextRequest): Promise<Response> => {
  const rawKey = request.headers.get('idempotency-key');
  const key = rawKey === null ? undefined : parseIdempotencyKey(rawKey);
  if (key && !key.ok) return keyProblem(key);
  // A key is scoped to its caller, so a keyed request must say who is calling.
  const who = key ? callerOf(request) : undefined;
  if (who && !who.ok) return who.response;
  const body = await readJsonBody(request, CreateOrderSchema, { allowEmpty: true });
  if (!body.ok) return body.response;
  if (body.value.lab && !env().LAB_ENABLED) {
    return problem(400, 'lab-disabled', 'The lab is turned off', {
      detail: 'This server does not accept lab settings (LAB_ENABLED=false).',
      errors: [{ field: 'lab', message: 'is not accepted: the lab is turned off' }],
    });
  }
  if (!key?.ok || !who?.ok) {
    const order = OrderSummarySchema.parse(await createOrder(body.value));
    return json(order, 201, { location: `/api/orders/${order.orderNo}` });
  }
  const name = requestKeyName(who.caller, key.key);
  const result = await createOrderOnce(body.value, { name, fingerprint: fingerprintOf(body.value) });
  switch (result.kind) {
    case 'created':
    case 'replayed':
      return json(result.order, 201, {
        location: `/api/orders/${result.order.orderNo}`,
        ...(result.kind === 'replayed' ? { 'idempotent-replayed': 'true' } : {}),
      });
    case 'in_progress':
      return problem(
        409,
        'order-in-progress',
        'Order creation in progress',
        { detail: 'An order with this Idempotency-Key is being created. Retry after the delay to get it.' },
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      );
    case 'mismatch':
      return keyReusedProblem(result.usedOn, 'order');
  }
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
