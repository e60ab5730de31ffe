import type { NextRequest } from 'next/server';
import { PaymentRequestSchema } from '@/lib/http/api-schemas';
import { readJsonBody } from '@/lib/http/body';
import { callerOf } from '@/lib/http/caller';
import { keyProblem, parseIdempotencyKey } from '@/lib/http/idempotency-key';
import { otherMethods } from '@/lib/http/methods';
import { paymentResponse } from '@/lib/http/payment-response';
import { preferredWaitSeconds, waitApplied } from '@/lib/http/prefer';
import { problem, say } from '@/lib/http/problem';
import { limitRate } from '@/lib/http/rate-limit';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { serviceRoute } from '@/lib/http/service-route';
import { payWaitingForFirst } from '@/lib/payments/wait-for-first';

/**
 * Service-to-service payment. The caller's Idempotency-Key names the intent and stays the same across
 * its retries; the outcome is kept for 24 hours and replayed with `Idempotent-Replayed: true`. Every
 * response carries X-Request-Id (the request's lane on the lab's timeline), and every answer X-Answered-By:
 * the defence or the bank that gave it, or `request` when the request itself was refused (400/404/413/422).
 */
export const POST = serviceRoute(async (request: NextRequest, requestId: string): Promise<Response> => {
  const crossSite = refuseCrossSite(request);
  if (crossSite) return crossSite;
  // 1. The key: required, and well-formed (the IETF draft: 400 when missing or malformed).
  const key = parseIdempotencyKey(request.headers.get('idempotency-key'));
  if (!key.ok) return keyProblem(key);
  // 2. Who is calling: keys are scoped per caller.
  const who = callerOf(request);
  if (!who.ok) return who.response;
  const limited = await limitRate('payments', who.caller, request.headers);
  if (limited) return limited;
  // 3. The body.
  const body = await readJsonBody(request, PaymentRequestSchema);
  if (!body.ok) return body.response;
  // 4. The pipeline: layers 2-4. A service call has no checkout token; a client acting for a screen (a
  //    mobile app) may send the one it got from GET /api/tokens, and layer 1 then checks it too.
  const token = request.headers.get('checkout-token') ?? undefined;
  if (token !== undefined && !/^[A-Za-z0-9_-]{1,128}$/.test(token)) {
    return problem(400, 'checkout-token', 'Checkout-Token malformed', {
      errors: [{ field: 'Checkout-Token', message: say('fields.notCheckoutToken') }],
    });
  }
  const { orderNo, amountCents, requestedAt } = body.value;
  // 5. A duplicate of a payment still running waits for its outcome when it prefers to (RFC 7240).
  const wait = preferredWaitSeconds(request.headers.get('prefer')) ?? 0;
  const { result, waited } = await payWaitingForFirst(
    {
      orderNo,
      amountCents,
      caller: who.caller,
      channel: 'api',
      idempotencyKey: key.key,
      checkoutToken: token,
      params: { orderNo, amountCents, ...(requestedAt === undefined ? {} : { requestedAt }) },
      requestId,
    },
    wait,
  );
  return paymentResponse(result, waited ? waitApplied(wait) : {});
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
