import 'server-only';
// What the lab makes of a payment: the policy each order runs under (its owner's lab, or the global one,
// overridden by the order's own settings), and the lab's faults at the pipeline's named fault points. The
// pipeline asks lib/payments/policy.ts; the lab registered this as its answer (register.ts).
import { madeWithoutSettings } from '../payments/order-no.ts';
import type { FaultPoints, PaymentPolicy, PolicySource } from '../payments/policy.ts';
import { decide, reason } from '../telemetry/spans.ts';
import type { Faults, LabSettings } from './settings.ts';
import { getLabSettings, getLabSettingsFor, settingsForOrder } from './settings-store.ts';

/** How the lab's crash faults kill the process: SIGKILL, on the spot (a test's throws instead). */
export type Crash = () => never;

export const killThisProcess: Crash = () => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: the process was killed');
};

/**
 * A crash fault that stops one attempt only, where the process would have died: nothing after the fault point
 * runs (no claim is settled or released; they stay until their lease runs out, and the reconciler finds the
 * charge), and the app runs on for everybody else. What a shared room's crash faults do (below).
 */
export class AttemptCrashed extends Error {
  constructor() {
    super('the lab’s crash fault stopped this attempt where its process would have died');
    this.name = 'AttemptCrashed';
  }
}

export const crashThisAttempt: Crash = () => {
  throw new AttemptCrashed();
};

type CrashFault = 'crashBeforeCharge' | 'crashAfterCharge';

/**
 * The lab's faults, where the pipeline's fault points are. `crashFor`: how a crash fault strikes (the process,
 * or the attempt alone). `flush`: the lab hears the lane before a crash.
 */
export function labFaultPoints(
  faults: Faults,
  crashFor: (fault: CrashFault) => Crash,
  flush: () => Promise<void>,
): FaultPoints {
  const { stallBeforeBankMs, crashBeforeCharge, crashAfterCharge, notifyFailsAfterCharge } = faults;
  if (stallBeforeBankMs === 0 && !crashBeforeCharge && !crashAfterCharge && !notifyFailsAfterCharge) {
    return () => undefined;
  }
  const crashAt = async (fault: CrashFault, span: Parameters<FaultPoints>[1]['span']) => {
    const crash = crashFor(fault);
    const point = fault === 'crashBeforeCharge' ? 'beforeCharge' : 'afterCharge';
    decide(span, 'request', 'crashed', () =>
      reason('crashed', { point, alone: crash === crashThisAttempt ? 'yes' : 'no' }),
    );
    await flush();
    crash();
  };
  return async (point, { span, tookOver, leaseMs }) => {
    if (point === 'pay.beforeBank') {
      // The pause strikes an attempt that claimed the order, not one recovering a stalled attempt's.
      if (stallBeforeBankMs > 0 && !tookOver) {
        decide(span, 'request', 'stalled', () => reason('stalled', { stallMs: stallBeforeBankMs, leaseMs }));
        await new Promise((resolve) => setTimeout(resolve, stallBeforeBankMs));
      }
      if (crashBeforeCharge) await crashAt('crashBeforeCharge', span);
    }
    if (point === 'pay.afterCharge' && crashAfterCharge) await crashAt('crashAfterCharge', span);
    if (point === 'pay.notify' && notifyFailsAfterCharge) throw new DownstreamNotifyError();
  };
}

/** The lab's downstream system refusing its notification: what the fault `notifyFailsAfterCharge` throws. */
export class DownstreamNotifyError extends Error {
  constructor() {
    super('the order service refused the payment notification (HTTP 500)');
    this.name = 'DownstreamNotifyError';
  }
}

export function policyOf(settings: LabSettings, faults: FaultPoints): PaymentPolicy {
  const { bankLatencyMs, bankFailure, bankTimeoutAfterCharge, bankLateChargeMs } = settings.faults;
  return {
    layers: settings.layers,
    leaseMs: settings.claims.leaseMs,
    keyStrategy: settings.keys.strategy,
    refundKeyStrategy: settings.keys.refunds,
    release: settings.claims.release,
    duplicateAnswer: settings.answers.duplicate,
    bank: { bankLatencyMs, bankFailure, bankTimeoutAfterCharge, bankLateChargeMs },
    faults,
  };
}

/**
 * The lab as the pipeline's policy source. `crash`: what a crash fault does to the process. `shared`: the app
 * serves a room (it is exposed): a crash fault from an attendee's own lab or an order's own settings stops
 * only that attempt, and only the global lab's, which the presenter alone changes, stops the process.
 */
export function labPolicySource(crash: Crash, flush: () => Promise<void>, shared = false): PolicySource {
  const policyFor = (ownersLab: LabSettings, settings: LabSettings, ownLab: boolean) => {
    const presenters = (fault: CrashFault) => !ownLab && ownersLab.faults[fault];
    const crashFor = (fault: CrashFault) => (shared && !presenters(fault) ? crashThisAttempt : crash);
    return policyOf(settings, labFaultPoints(settings.faults, crashFor, flush));
  };
  // The global lab's policy, made once for each reading of its settings (they are read again every 250 ms at
  // most: settings-store.ts): most payments run under it, and a policy keeps nothing of a payment.
  const globalPolicies = new WeakMap<LabSettings, PaymentPolicy>();
  const forOrder: PolicySource['forOrder'] = async ({ owner, lab }) => {
    // An attendee's own lab (a browser session's) for the orders it created; the global one otherwise.
    const ownLab = owner?.startsWith('s.') ?? false;
    const ownersLab = ownLab ? await getLabSettingsFor(owner as string) : await getLabSettings();
    const settings = settingsForOrder(ownersLab, lab);
    if (ownLab || settings !== ownersLab) return policyFor(ownersLab, settings, ownLab);
    let policy = globalPolicies.get(settings);
    if (!policy) {
      policy = policyFor(ownersLab, settings, false);
      globalPolicies.set(settings, policy);
    }
    return policy;
  };
  return {
    forOrder,
    /**
     * A service (X-Client-Id) may pay only the orders it owns or nobody owns (a session the owner lets in is a
     * browser's): orders of the global lab. One whose number says it has no settings of its own runs under that
     * lab, told without reading the order (pay.ts's `checkAtClaim`). Anything else is read first.
     */
    async forCaller(caller, orderNo) {
      if (!caller.startsWith('c.') || !madeWithoutSettings(orderNo)) return undefined;
      const policy = await forOrder({ orderNo, owner: null, lab: null });
      // Under the rule that never gives a key back, a key claimed for an order its claim then refuses (a typo,
      // another's order) would stay held: its retries told "in progress", where a read first tells them 404.
      return policy.release === 'never' ? undefined : policy;
    },
    leaseMs: async () => (await getLabSettings()).claims.leaseMs,
  };
}
