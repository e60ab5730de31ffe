import 'server-only';
// The benchmark's straight line: the guarded payment's own stores, called one after the other by hand. Layer 2's
// claim and completion (its Lua scripts: the fencing token, the fingerprint kept with the key, the owner checked
// before completing), the order's claim with its dedup row (the payer and the amount checked in the statement, the
// order's fencing token raised), the bank's charge under that token with the bank's key, and the record of the
// outcome (conditional on the claim and its token, with the receipt's event, one per charge): the same statements
// and scripts, with the same checks, as an API payment with every layer on and the lab off makes on its way to the
// outcome (without its recovery, its release after a failure or its outcomes in doubt). What it leaves out
// is the pipeline's shape: no defences around the rest, no runner, no policy, no spans, no lab. The guarded
// payment's ratio to it is what that shape costs (decision 039 proposes it for issue 25's targets); the ideal guard
// (lib/bench/ideal.ts), which does less, says what the guarantees cost besides.
// A yardstick, not a second implementation: no faults, no recovery, no replay (a key already held is answered "in
// progress", as the ideal answers it).
import { bankKeyFor } from '../defences/bank-key/defence.ts';
import type { Answer } from '../defences/defence.ts';
import { claimOrder, orderLock, recordOutcome } from '../defences/order-claim/store.ts';
import { outcomeFromCharge } from '../defences/outcome.ts';
import { fingerprintOf, requestKeyName } from '../defences/request-key/record.ts';
import { claimRequestKey, completeRequestKey, releaseRequestKey } from '../defences/request-key/store.ts';
import { env } from '../env.ts';
import { newAttemptId } from '../instance.ts';
import { chargeCard, NO_BANK_FAULTS } from '../payments/bank.ts';
import type { CallerScope } from '../session.ts';

/** Both of the order's claims, as the pipeline makes them with layers 3 and 4 on: one statement. */
const BOTH_CLAIMS = { stateMachine: true, uniqueConstraint: true };

export async function straightLinePayment(request: {
  orderNo: string;
  amountCents: number;
  caller: CallerScope;
  key: string;
}): Promise<Answer> {
  const { orderNo, amountCents, caller } = request;
  const { REQUEST_KEY_LEASE_MS: leaseMs, REQUEST_KEY_RESULT_TTL_SECONDS: ttlSeconds } = env();
  const name = requestKeyName(caller, request.key);
  const owner = newAttemptId();
  const fingerprint = fingerprintOf({ orderNo, amountCents });
  const now = Date.now();
  // 1. Layer 2: claim the request key.
  const key = await claimRequestKey(name, { owner, fingerprint }, { now, leaseMs, ttlSeconds });
  if (key.kind !== 'claimed') return { kind: 'in_progress', answeredBy: 'requestKey' };
  // 2. Layers 3 and 4: claim the order with its dedup row, if this caller may pay it at this amount.
  const claimed = await claimOrder(BOTH_CLAIMS, orderNo, owner, new Date(now), { caller, amountCents });
  if (!('fence' in claimed)) {
    await releaseRequestKey(name, owner);
    return { kind: 'in_progress', answeredBy: 'stateMachine' };
  }
  // 3. Layer 5 and the bank: the charge, under the order's fencing token, with the bank's key.
  const { fence } = claimed;
  const charge = await chargeCard(
    {
      merchantRef: orderNo,
      amountCents,
      idempotencyKey: bankKeyFor(orderNo),
      fence: { lock: orderLock(orderNo), token: fence },
    },
    NO_BANK_FAULTS,
  );
  // 4. The outcome recorded under the claim (the order, the dedup row, the receipt's event), then on the key (the
  //    payments endpoint, the record's default, is not written: as the pipeline writes it).
  const outcome = outcomeFromCharge(orderNo, charge);
  await recordOutcome(outcome, { orderNo, attemptId: owner, fence }, BOTH_CLAIMS);
  await completeRequestKey(name, owner, { fingerprint, outcome, existing: false }, ttlSeconds);
  return { kind: 'completed', outcome };
}
