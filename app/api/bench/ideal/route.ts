import { idealPayment } from '@/lib/bench/ideal';
import { env } from '@/lib/env';
import { otherMethods } from '@/lib/http/methods';

/** The benchmark's yardstick: the minimum guard work by hand (lib/bench/ideal.ts). */
export async function POST(request: Request): Promise<Response> {
  if (!env().BENCH_ROUTES) return new Response(null, { status: 404 });
  const { orderNo, amountCents } = (await request.json()) as { orderNo: string; amountCents: number };
  const { status, body } = await idealPayment(orderNo, amountCents, request.headers.get('idempotency-key') ?? orderNo);
  return Response.json(body, { status });
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
