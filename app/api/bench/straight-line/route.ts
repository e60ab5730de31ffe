import type { NextRequest } from 'next/server';
import { straightLinePayment } from '@/lib/bench/straight-line';
import { env } from '@/lib/env';
import { otherMethods } from '@/lib/http/methods';
import { readPaymentRequest } from '@/lib/http/payment-request';
import { paymentResponse } from '@/lib/http/payment-response';
import { serviceRoute } from '@/lib/http/service-route';

/**
 * The benchmark's straight line: the guarded payment's own stores called one after the other by hand
 * (lib/bench/straight-line.ts), behind the same reading of the request and the same answer as POST /api/payments,
 * so that the two differ by the pipeline's shape alone (decision 039).
 */
const pay = serviceRoute(async (request: NextRequest, requestId: string): Promise<Response> => {
  const read = await readPaymentRequest(request);
  if (!read.ok) return read.response;
  const { key, caller, orderNo, amountCents } = read.value;
  const answer = await straightLinePayment({ orderNo, amountCents, caller, key });
  return paymentResponse({ requestId, ...answer });
});

export async function POST(request: NextRequest): Promise<Response> {
  if (!env().BENCH_ROUTES) return new Response(null, { status: 404 });
  return pay(request);
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
