import 'server-only';
// A duplicate that prefers to wait (`Prefer: wait=N` on POST /api/payments): when the first request with its
// key is still running, it waits up to N seconds for that request's outcome and answers it as a replay would,
// instead of "in progress" and a client that polls. Woken when the key changes (the outcome stored, the claim
// given back or put in doubt: watch.ts), and asking again at least every 3 s, it runs the payment again,
// as the client's own retry would have: a replay once the first is done, or its own attempt once the first
// gave its claim back. Past N seconds it answers what it is told then ("in progress", 409).
import { requestKeyName } from '../defences/request-key/record.ts';
import { askUntilSettled } from '../defences/request-key/watch.ts';
import { type PayRequest, type PayResult, pay } from './pay.ts';

/** Pays; a duplicate of a running payment waits up to `waitSeconds` for its outcome. `waited`: it did wait. */
export async function payWaitingForFirst(
  request: PayRequest & { idempotencyKey: string },
  waitSeconds: number,
): Promise<{ result: PayResult; waited: boolean }> {
  const first = await pay(request);
  if (first.kind !== 'in_progress' || waitSeconds <= 0) return { result: first, waited: false };
  // The key of the caller's Idempotency-Key (layer 2's business key, what the API sends); under the lab's other
  // key strategies nothing is published there, and the waiter asks again every 3 s.
  const key = requestKeyName(request.caller, request.idempotencyKey);
  // Each new question is an attempt of its own, with its own lane on the timeline.
  const again = () => pay({ ...request, requestId: undefined });
  const result = await askUntilSettled(key, waitSeconds * 1_000, again, (answer) => answer.kind === 'in_progress');
  return { result, waited: true };
}
