import type { NextRequest } from 'next/server';
import { idealPayment } from '@/lib/bench/ideal';
import { env } from '@/lib/env';
import { otherMethods } from '@/lib/http/methods';
import { readPaymentRequest } from '@/lib/http/payment-request';
import { paymentResponse } from '@/lib/http/payment-response';
import { serviceRoute } from '@/lib/http/service-route';

/**
 * The benchmark's yardstick: the minimum guard work by hand (lib/bench/ideal.ts), behind the same reading of the
 * request and the same answer as POST /api/payments, so that the two differ by their guards alone (decision 038).
 */
const pay = serviceRoute(async (request: NextRequest, requestId: string): Promise<Response> => {
  const read = await readPaymentRequest(request);
  if (!read.ok) return read.response;
  const { key, caller, orderNo, amountCents } = read.value;
  const answer = await idealPayment(orderNo, amountCents, `idem:bench:{${caller}:${key}}`);
  return paymentResponse({ requestId, ...answer });
});

export async function POST(request: NextRequest): Promise<Response> {
  if (!env().BENCH_ROUTES) return new Response(null, { status: 404 });
  return pay(request);
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
