import { idealPayment } from '@/lib/bench/ideal';
import { env } from '@/lib/env';
import { otherMethods } from '@/lib/http/methods';

/**
 * The ideal guard bare: its body taken on trust (no checks of the key, the caller or the body), its outcome sent
 * as it is (no request id, no problem). Not an API anyone should serve; measured beside the ideal guard behind
 * the payments API's reading of the request (app/api/bench/ideal) to show what that contract costs (decision 038).
 */
export async function POST(request: Request): Promise<Response> {
  if (!env().BENCH_ROUTES) return new Response(null, { status: 404 });
  const { orderNo, amountCents } = (await request.json()) as { orderNo: string; amountCents: number };
  const key = request.headers.get('idempotency-key') ?? orderNo;
  const answer = await idealPayment(orderNo, amountCents, `idem:bench:${key}`);
  return answer.kind === 'completed'
    ? Response.json(answer.outcome, { status: 201 })
    : Response.json({ status: 'IN_PROGRESS' }, { status: 409 });
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
