import { idealPayment } from '@/lib/bench/ideal';
import { env } from '@/lib/env';

/** The benchmark's yardstick: the minimum guard work by hand (lib/bench/ideal.ts). */
export async function POST(request: Request): Promise<Response> {
  if (!env().BENCH_ROUTES) return new Response(null, { status: 404 });
  const { orderNo, amountCents } = (await request.json()) as { orderNo: string; amountCents: number };
  const { status, body } = await idealPayment(orderNo, amountCents, request.headers.get('idempotency-key') ?? orderNo);
  return Response.json(body, { status });
}
