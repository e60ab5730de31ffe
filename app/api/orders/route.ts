import type { NextRequest } from 'next/server';
import { fingerprintOf, requestKeyName } from '@/lib/defences/request-key/record';
import { askUntilSettled } from '@/lib/defences/request-key/watch';
import { env } from '@/lib/env';
import { CreateOrderSchema } from '@/lib/http/api-schemas';
import { readJsonBody } from '@/lib/http/body';
import { callerOf } from '@/lib/http/caller';
import { keyProblem, keyReusedProblem, parseIdempotencyKey } from '@/lib/http/idempotency-key';
import { otherMethods } from '@/lib/http/methods';
import { RETRY_AFTER_SECONDS } from '@/lib/http/payment-response';
import { preferredWaitSeconds, waitApplied } from '@/lib/http/prefer';
import { isExposed, presenterOnly, sharedFaultsIn } from '@/lib/http/presenter';
import { isPresenter } from '@/lib/http/presenter-session';
import { json, problem, say, withProblems } from '@/lib/http/problem';
import { limitRate } from '@/lib/http/rate-limit';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { createOrder, createOrderOnce, OrderSummarySchema } from '@/lib/payments/orders';

/**
 * Creates an order. With an Idempotency-Key (optional here), at most once per key: a retry gets the first
 * order back (201, the same bytes, Idempotent-Replayed), like POST /api/payments.
 */
export const POST = withProblems(async (request: NextRequest): Promise<Response> => {
  const crossSite = refuseCrossSite(request);
  if (crossSite) return crossSite;
  const rawKey = request.headers.get('idempotency-key');
  const key = rawKey === null ? undefined : parseIdempotencyKey(rawKey);
  if (key && !key.ok) return keyProblem(key);
  // The order belongs to the caller that names itself (X-Client-Id, or a browser's session). A key is scoped
  // to its caller, so a keyed request must name one; an unkeyed one that names none makes an open order.
  const named = request.headers.has('x-client-id') || sessionIdOf(request.cookies, request.headers) !== undefined;
  const who = key || named ? callerOf(request) : undefined;
  if (who && !who.ok) return who.response;
  const owner = who?.ok ? who.caller : undefined;
  // Exposed to a room, every order belongs to someone: an open one would be anyone's to read and pay.
  if (!owner && isExposed()) {
    return problem(400, 'missing-caller', 'Who is calling?', {
      detail: say('details.missingCallerOrders'),
      errors: [{ field: 'X-Client-Id', message: say('fields.isRequired') }],
    });
  }
  const limited = await limitRate('orders', owner, request.headers);
  if (limited) return limited;
  const body = await readJsonBody(request, CreateOrderSchema, { allowEmpty: true });
  if (!body.ok) return body.response;
  if (isExposed() && sharedFaultsIn(body.value.lab) && !(await isPresenter(request))) {
    return presenterOnly('stopTheApp');
  }
  if (body.value.lab && !env().LAB_ENABLED) {
    return problem(400, 'lab-disabled', 'The lab is turned off', {
      detail: say('details.labDisabled'),
      errors: [{ field: 'lab', message: say('fields.labNotAccepted') }],
    });
  }
  if (!key?.ok || !owner) {
    const order = OrderSummarySchema.parse(await createOrder(body.value, owner));
    return json(order, 201, { location: `/api/orders/${order.orderNo}` });
  }
  const name = requestKeyName(owner, key.key);
  const create = () => createOrderOnce(body.value, { name, fingerprint: fingerprintOf(body.value) }, owner);
  const first = await create();
  // A duplicate of a creation still running waits for it when it prefers to (RFC 7240 `Prefer: wait=N`).
  const wait = preferredWaitSeconds(request.headers.get('prefer')) ?? 0;
  const waited = first.kind === 'in_progress' && wait > 0;
  const result = waited
    ? await askUntilSettled(name, wait * 1_000, create, (answer) => answer.kind === 'in_progress')
    : first;
  const applied = waited ? waitApplied(wait) : {};
  switch (result.kind) {
    case 'created':
    case 'replayed':
      return json(result.order, 201, {
        location: `/api/orders/${result.order.orderNo}`,
        ...(result.kind === 'replayed' ? { 'idempotent-replayed': 'true' } : {}),
        ...applied,
      });
    case 'in_progress':
      return problem(
        409,
        'order-in-progress',
        'Order creation in progress',
        { detail: say('details.orderInProgress') },
        { 'retry-after': String(RETRY_AFTER_SECONDS), ...applied },
      );
    case 'mismatch':
      return keyReusedProblem(result.usedOn, 'order');
  }
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
