// POST /api/payments's request, read and checked before any defence runs: the request's own refusals (403 cross-site,
// 400 key, 400 caller, 429, 413/415/400/422 body, 400 token), each a problem naming its field. The benchmark's
// ideal guard reads its requests here too (app/api/bench/ideal), so that its ratio measures the guard and nothing
// else: both routes pay the same for the HTTP contract around it (decision 038).
import type { NextRequest } from 'next/server';
import type { CallerScope } from '../session.ts';
import { PaymentRequestSchema } from './api-schemas.ts';
import { readJsonBody } from './body.ts';
import { callerOf } from './caller.ts';
import { keyProblem, parseIdempotencyKey } from './idempotency-key.ts';
import { problem, say } from './problem.ts';
import { limitRate } from './rate-limit.ts';
import { refuseCrossSite } from './same-origin.ts';

/** A payment request as the pipeline takes it. */
export type PaymentRequest = {
  /** The caller's Idempotency-Key: the intent, the same across its retries. */
  key: string;
  caller: CallerScope;
  orderNo: string;
  amountCents: number;
  requestedAt?: number | string;
  /** A page's one-time token, sent by a client acting for a screen. */
  checkoutToken?: string;
};

export async function readPaymentRequest(
  request: NextRequest,
): Promise<{ ok: true; value: PaymentRequest } | { ok: false; response: Response }> {
  const crossSite = refuseCrossSite(request);
  if (crossSite) return { ok: false, response: crossSite };
  // 1. The key: required, and well-formed (the IETF draft: 400 when missing or malformed).
  const key = parseIdempotencyKey(request.headers.get('idempotency-key'));
  if (!key.ok) return { ok: false, response: keyProblem(key) };
  // 2. Who is calling: keys are scoped per caller.
  const who = callerOf(request);
  if (!who.ok) return who;
  const limited = await limitRate('payments', who.caller, request.headers);
  if (limited) return { ok: false, response: limited };
  // 3. The body.
  const body = await readJsonBody(request, PaymentRequestSchema);
  if (!body.ok) return body;
  // 4. A service call has no checkout token; a client acting for a screen (a mobile app) may send the one it got
  //    from GET /api/tokens, and layer 1 then checks it too.
  const token = request.headers.get('checkout-token') ?? undefined;
  if (token !== undefined && !/^[A-Za-z0-9_-]{1,128}$/.test(token)) {
    const response = problem(400, 'checkout-token', 'Checkout-Token malformed', {
      errors: [{ field: 'Checkout-Token', message: say('fields.notCheckoutToken') }],
    });
    return { ok: false, response };
  }
  const { orderNo, amountCents, requestedAt } = body.value;
  return {
    ok: true,
    value: {
      key: key.key,
      caller: who.caller,
      orderNo,
      amountCents,
      ...(requestedAt === undefined ? {} : { requestedAt }),
      ...(token === undefined ? {} : { checkoutToken: token }),
    },
  };
}
