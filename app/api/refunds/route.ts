import type { NextRequest } from 'next/server';
import { RefundRequestSchema } from '@/lib/http/api-schemas';
import { readJsonBody } from '@/lib/http/body';
import { callerOf } from '@/lib/http/caller';
import { keyProblem, parseIdempotencyKey } from '@/lib/http/idempotency-key';
import { otherMethods } from '@/lib/http/methods';
import { limitRate } from '@/lib/http/rate-limit';
import { refundResponse } from '@/lib/http/refund-response';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { serviceRoute } from '@/lib/http/service-route';
import { refund } from '@/lib/refunds/refund';

/**
 * Refunds part of a paid order (service to service). The Idempotency-Key is the refund's request id: the caller
 * creates it once for this refund, keeps it with the refund in its own transaction before sending, and sends it on
 * every retry; a second refund is a new id. The ledger refuses refunds past the charge, saying how much is left.
 */
export const POST = serviceRoute(async (request: NextRequest, laneId: string): Promise<Response> => {
  const crossSite = refuseCrossSite(request);
  if (crossSite) return crossSite;
  // 1. The key, the refund's request id: required, and well-formed.
  const key = parseIdempotencyKey(request.headers.get('idempotency-key'));
  if (!key.ok) return keyProblem(key);
  // 2. Who is calling: keys, and the orders they may refund, are the caller's.
  const who = callerOf(request);
  if (!who.ok) return who.response;
  const limited = await limitRate('payments', who.caller, request.headers);
  if (limited) return limited;
  // 3. The body.
  const body = await readJsonBody(request, RefundRequestSchema);
  if (!body.ok) return body.response;
  const { orderNo, amountCents, requestedAt } = body.value;
  // 4. The pipeline: layers 2-5 and the ledger.
  const result = await refund({
    orderNo,
    amountCents,
    caller: who.caller,
    channel: 'api',
    requestId: key.key,
    params: { orderNo, amountCents, ...(requestedAt === undefined ? {} : { requestedAt }) },
    laneId,
  });
  return refundResponse(result);
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
