import 'server-only';
// How a pipeline runs its defences, whatever it moves (a payment, pay.ts; a refund, lib/refunds/refund.ts): each
// defence around the rest, the bank innermost, each layer's guard in a span of its own; and, between the claims
// and the bank, the fault point and the renewal of claims an attempt may have lost while it was away.
import type { Defence, Ending, Lease, LostClaim, Next, ToBank } from '../defences/defence.ts';
import type { RaceHook } from '../defences/race-points.ts';
import { ATTR, type Span, startSpan } from '../telemetry/spans.ts';
import type { FaultContext, FaultPoints } from './policy.ts';

/** What a request is told when a defence's store fails before the bank (its pipeline then throws the error). */
export const FAILED_BEFORE_BANK = { kind: 'failed_retryable', reason: 'a defence failed before the bank' } as const;

/** What the defences handed inward: their leases, outermost first, and the bank's key. */
export type Handed = { leases: Lease[]; toBank?: ToBank };

/** What the runner needs of an attempt: its span (each guard's is a child of it). */
type Traced = { span: Span };

/**
 * Runs the defences, each around the rest, the bank innermost. What a defence hands inward (its lease, the bank's
 * key) is gathered for the bank. A defence that fails before the bank (the database is down) becomes a stop for the
 * guards outside it, which give their claims back (nothing has moved), and the pipeline then throws its error.
 * From the bank on, a throw (the lab's crash) goes through every guard.
 */
export async function guarded<At extends Traced, A, O>(
  defences: Defence<At, A, O>[],
  attempt: At,
  bank: (handed: Handed) => Promise<Ending<A, O>>,
  failedBeforeBank: A,
): Promise<Ending<A, O>> {
  const handed: Handed = { leases: [] };
  let atBank = false;
  let failure: unknown;
  // Plain functions returning the guard's promise, not async ones: every `async` wrapper and `await` is one more
  // promise per defence per payment, which the framework's async context tracking makes dear (bench/results.md).
  const from = (index: number): Promise<Ending<A, O>> => {
    const defence = defences[index];
    if (!defence) {
      atBank = true;
      return bank(handed);
    }
    const next: Next<A, O> = (passing) => {
      if (passing?.lease) handed.leases.push(passing.lease);
      if (passing?.toBank) handed.toBank = passing.toBank;
      return from(index + 1);
    };
    return guardTraced(defence, attempt, next).catch((error: unknown) => {
      if (atBank) throw error;
      failure ??= error;
      return { kind: 'stopped', answer: failedBeforeBank, failure };
    });
  };
  return from(0);
}

/**
 * One layer's guard in a span of its own, a child of the attempt's: the defence records its decisions there,
 * and the span ends when the guard returns (it has heard how the rest ended). A step that is not a layer (the
 * order's amount, the unguarded order) has no span: it would be an empty one on every payment.
 */
function guardTraced<At extends Traced, A, O>(
  defence: Defence<At, A, O>,
  attempt: At,
  next: Next<A, O>,
): Promise<Ending<A, O>> {
  const { layer } = defence;
  // A step that is not a layer; or a payment nobody records, whose defences nobody records either (a span's
  // sampler follows its parent's: OpenTelemetry's default), so no span is made for them (its name, its attributes
  // and its context are about 2 µs of CPU a defence, for nothing).
  if (layer === undefined || !attempt.span.isRecording()) return defence.guard(attempt, next);
  const span = startSpan(`defence ${layer}`, { attributes: { [ATTR.layer]: layer } }, attempt.span);
  // Nobody listens (no provider registered: the API's no-op span): nothing to end.
  if (!span.isRecording()) return defence.guard(attempt, next);
  return defence.guard({ ...attempt, span }, next).finally(() => span.end());
}

/** What the fault point and the renewal need of an attempt. */
type Away = { orderNo: string; span: Span; leaseMs: number; now: () => number; at?: RaceHook };

/** How an attempt that was away stops before the bank: a claim it lost, or a store that failed renewing one. */
export type NoLongerHeld<A> = { kind: 'stopped'; answer: LostClaim | A; failure?: unknown };

/**
 * Between the claims and the bank, the fault point (a pause: a GC pause, an overloaded host; or a crash).
 * An attempt that was away for half its lease renews its claims, and stops if it lost one (it was taken
 * over): the answer it then gives. A fresh one cannot have lost them. Either way the bank checks the token:
 * this is only early. A store that fails while renewing (Redis unreachable) fails the attempt before the bank,
 * as a defence failing on the way in does (`failedBeforeBank`): nothing has moved, so the claims are given back
 * (each conditional on this attempt's token), not left held for a lease by an attempt that has answered. The
 * fault point's crash still goes through every guard.
 */
export async function stillHeld<A>(
  leases: Lease[],
  attempt: Away,
  faults: FaultPoints,
  failedBeforeBank: A,
): Promise<NoLongerHeld<A> | undefined> {
  const { now, leaseMs } = attempt;
  const claimedAt = now();
  const fault = faults('pay.beforeBank', faultContext(attempt, leases));
  if (fault) await fault;
  if (attempt.at) await attempt.at('pay.beforeBank');
  if (now() - claimedAt <= leaseMs / 2) return undefined;
  const renewedAt = now();
  try {
    for (const lease of [...leases].reverse()) {
      const lost = await lease.renew(renewedAt);
      if (lost) return { kind: 'stopped', answer: lost };
    }
  } catch (failure) {
    return { kind: 'stopped', answer: failedBeforeBank, failure };
  }
  return undefined;
}

export function faultContext(attempt: Away, leases: Lease[]): FaultContext {
  const { orderNo, span, leaseMs } = attempt;
  return { orderNo, span, leaseMs, tookOver: leases.some((lease) => lease.tookOver) };
}
