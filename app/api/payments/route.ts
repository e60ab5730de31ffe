import type { NextRequest } from 'next/server';
import { otherMethods } from '@/lib/http/methods';
import { readPaymentRequest } from '@/lib/http/payment-request';
import { paymentResponse } from '@/lib/http/payment-response';
import { preferredWaitSeconds, waitApplied } from '@/lib/http/prefer';
import { serviceRoute } from '@/lib/http/service-route';
import { payWaitingForFirst } from '@/lib/payments/wait-for-first';

/**
 * Service-to-service payment. The caller's Idempotency-Key names the intent and stays the same across
 * its retries; the outcome is kept for 24 hours and replayed with `Idempotent-Replayed: true`. Every
 * response carries X-Request-Id (the request's lane on the lab's timeline), and every answer X-Answered-By:
 * the defence or the bank that gave it, or `request` when the request itself was refused (400/404/413/422).
 */
export const POST = serviceRoute(async (request: NextRequest, requestId: string): Promise<Response> => {
  // 1-4. The request: its key, its caller, its body, a page's token (lib/http/payment-request.ts).
  const read = await readPaymentRequest(request);
  if (!read.ok) return read.response;
  const { key, caller, orderNo, amountCents, requestedAt, checkoutToken } = read.value;
  // 5. The pipeline: layers 2-4 (and layer 1 when a page's token came). A duplicate of a payment still running
  //    waits for its outcome when it prefers to (RFC 7240).
  const wait = preferredWaitSeconds(request.headers.get('prefer')) ?? 0;
  const { result, waited } = await payWaitingForFirst(
    {
      orderNo,
      amountCents,
      caller,
      channel: 'api',
      idempotencyKey: key,
      checkoutToken,
      params: { orderNo, amountCents, ...(requestedAt === undefined ? {} : { requestedAt }) },
      requestId,
    },
    wait,
  );
  return paymentResponse(result, waited ? waitApplied(wait) : {});
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
