import 'server-only';
// What the lab makes of a payment: the policy each order runs under (its owner's lab, or the global one,
// overridden by the order's own settings), and the lab's faults at the pipeline's named fault points. The
// pipeline asks lib/payments/policy.ts; the lab registered this as its answer (register.ts).
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

/** The lab's faults, where the pipeline's fault points are. `flush`: the lab hears the lane before a crash. */
export function labFaultPoints(faults: Faults, crash: Crash, flush: () => Promise<void>): FaultPoints {
  const { stallBeforeBankMs, crashBeforeCharge, crashAfterCharge, notifyFailsAfterCharge } = faults;
  if (stallBeforeBankMs === 0 && !crashBeforeCharge && !crashAfterCharge && !notifyFailsAfterCharge) {
    return () => undefined;
  }
  return async (point, { span, tookOver, leaseMs }) => {
    if (point === 'pay.beforeBank') {
      // The pause strikes an attempt that claimed the order, not one recovering a stalled attempt's.
      if (stallBeforeBankMs > 0 && !tookOver) {
        decide(span, 'request', 'stalled', reason('stalled', { stallMs: stallBeforeBankMs, leaseMs }));
        await new Promise((resolve) => setTimeout(resolve, stallBeforeBankMs));
      }
      if (crashBeforeCharge) {
        await flush();
        crash();
      }
    }
    if (point === 'pay.afterCharge' && crashAfterCharge) {
      await flush();
      crash();
    }
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
    release: settings.claims.release,
    duplicateAnswer: settings.answers.duplicate,
    bank: { bankLatencyMs, bankFailure, bankTimeoutAfterCharge, bankLateChargeMs },
    faults,
  };
}

/** The lab as the pipeline's policy source. */
export function labPolicySource(crash: Crash, flush: () => Promise<void>): PolicySource {
  return {
    async forOrder({ owner, lab }) {
      // An attendee's own lab (a browser session's) for the orders it created; the global one otherwise.
      const ownersLab = owner?.startsWith('s.') ? await getLabSettingsFor(owner) : await getLabSettings();
      const settings = settingsForOrder(ownersLab, lab);
      return policyOf(settings, labFaultPoints(settings.faults, crash, flush));
    },
    leaseMs: async () => (await getLabSettings()).claims.leaseMs,
  };
}
