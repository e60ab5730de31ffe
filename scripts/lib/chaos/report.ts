// The chaos storm's report: what the run came to, as numbers (bench/results.json) and as section 6 of
// bench/results.md.
import type { Caller, Outage, RefundCaller, StormEvent } from './drive.ts';
import type { InvariantCheck, OrderHistory } from './invariants.ts';
import {
  AMOUNT_CENTS,
  CALLER_DEADLINE_MS,
  CALLERS,
  CLIENT_TIMEOUT_MS,
  CONFIGURATION_NAMES,
  FAULT_KINDS,
  FAULT_NAMES,
  type FaultKind,
  LAUNCH_MS,
  LEASE_MS,
  type PlannedOrder,
  REFUND_INTENTS,
  SETTLE_TIMEOUT_MS,
} from './plan.ts';

export type ChaosResults = {
  seed: number;
  /** Per configuration of the defences: orders, charges, orders charged more than once. */
  configurations: Record<string, { orders: number; charges: number; doubleCharges: number }>;
  /** Kills of the app at random moments (beside the crash faults'). */
  randomKills: number;
  orders: number;
  callersPerOrder: number;
  leaseMs: number;
  launchSeconds: number;
  /** Per fault: orders given it, orders claimed with it on, orders whose claim was taken over (fence > 1). */
  faults: Record<FaultKind, { planned: number; injected: number; takenOver: number }>;
  appCrashes: number;
  appRestartSeconds: number[];
  redisRestarts: number;
  redisDownSeconds: number;
  /** Payments answered 503 while the server was down. */
  redisAnswered503: number;
  postgresRestarts: number;
  postgresDownSeconds: number;
  postgresAnswered503: number;
  requests: number;
  answers: Record<string, number>;
  callers: number;
  callersAnswered: number;
  callersGaveUp: number;
  callersRefused: number;
  secondsToAnswer: { p50: number; p99: number; max: number };
  stormSeconds: number;
  settledAfterSeconds: number | null;
  doubleCharges: number;
  statuses: Record<string, number>;
  checks: InvariantCheck[];
  failures: OrderHistory[];
  /** The refunds asked for in the storm, once their orders were paid. */
  refunds: {
    orders: number;
    callers: number;
    requests: number;
    answers: Record<string, number>;
    /** Callers told a refund; told "more than is left"; that gave up at the deadline. */
    told: number;
    refused: number;
    gaveUp: number;
    secondsToAnswer: { p50: number; p99: number; max: number };
    /** What the bank refunded for them, in refunds and in cents. */
    bankRefunds: number;
    bankCents: number;
  };
};

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export function tally(callers: Array<Pick<Caller, 'attempts'>>): Record<string, number> {
  const answers: Record<string, number> = {};
  for (const attempt of callers.flatMap((c) => c.attempts)) {
    const name = attempt.status === undefined ? (attempt.error ?? 'error') : String(attempt.status);
    answers[name] = (answers[name] ?? 0) + 1;
  }
  return answers;
}

export function summarize(run: {
  seed: number;
  plan: PlannedOrder[];
  chargesOf: Map<string, number>;
  randomKills: number;
  callers: Caller[];
  events: StormEvent[];
  clearedAt: Map<string, number>;
  appRestartMs: number[];
  redisOutage: Outage;
  postgresOutage: Outage;
  stormMs: number;
  settledMs: number | null;
  statuses: Record<string, number>;
  takenOver: Set<string>;
  checks: InvariantCheck[];
  failures: OrderHistory[];
  refunds: { orders: number; callers: RefundCaller[]; bank: { refunds: number; cents: number } };
}): ChaosResults {
  const faults = Object.fromEntries(
    FAULT_KINDS.map((kind) => [kind, { planned: 0, injected: 0, takenOver: 0 }]),
  ) as ChaosResults['faults'];
  for (const order of run.plan) {
    faults[order.fault].planned++;
    // Injected: the order was claimed with its fault on (the storm took it off after that first claim).
    if (order.fault !== 'none' && run.clearedAt.has(order.orderNo)) faults[order.fault].injected++;
    if (run.takenOver.has(order.orderNo)) faults[order.fault].takenOver++;
  }
  const answered = run.callers.filter((c) => c.final);
  const seconds = answered.map((c) => ((c.final?.at ?? 0) - c.startedAt) / 1000);
  const refundCallers = run.refunds.callers;
  const refundSeconds = refundCallers.flatMap((c) => (c.final ? [(c.final.at - c.startedAt) / 1000] : []));
  const doubleCharges = run.checks[0]?.failing.length ?? 0;
  const configurations = Object.fromEntries(
    CONFIGURATION_NAMES.map((name) => [name, { orders: 0, charges: 0, doubleCharges: 0 }]),
  ) as ChaosResults['configurations'];
  for (const order of run.plan) {
    const charges = run.chargesOf.get(order.orderNo) ?? 0;
    const row = configurations[order.configuration] ?? { orders: 0, charges: 0, doubleCharges: 0 };
    configurations[order.configuration] = row;
    row.orders++;
    row.charges += charges;
    if (charges > 1) row.doubleCharges++;
  }
  return {
    configurations,
    randomKills: run.randomKills,
    seed: run.seed,
    orders: run.plan.length,
    callersPerOrder: CALLERS.length,
    leaseMs: LEASE_MS,
    launchSeconds: LAUNCH_MS / 1000,
    faults,
    appCrashes: run.events.filter((e) => e.what.startsWith('app died')).length,
    appRestartSeconds: run.appRestartMs.map((ms) => Math.round(ms / 100) / 10),
    redisRestarts: 1,
    redisDownSeconds: Math.round(run.redisOutage.downMs / 100) / 10,
    redisAnswered503: run.redisOutage.answered503,
    postgresRestarts: 1,
    postgresDownSeconds: Math.round(run.postgresOutage.downMs / 100) / 10,
    postgresAnswered503: run.postgresOutage.answered503,
    requests: run.callers.reduce((n, c) => n + c.attempts.length, 0),
    answers: tally(run.callers),
    callers: run.callers.length,
    callersAnswered: answered.filter((c) => [200, 201, 402].includes(c.final?.status ?? 0)).length,
    callersGaveUp: run.callers.filter((c) => c.gaveUp).length,
    callersRefused: answered.filter((c) => ![200, 201, 402].includes(c.final?.status ?? 0)).length,
    secondsToAnswer: spread(seconds),
    stormSeconds: Math.round(run.stormMs / 100) / 10,
    settledAfterSeconds: run.settledMs === null ? null : Math.round(run.settledMs / 100) / 10,
    doubleCharges,
    statuses: run.statuses,
    checks: run.checks,
    failures: run.failures,
    refunds: {
      orders: run.refunds.orders,
      callers: refundCallers.length,
      requests: refundCallers.reduce((n, c) => n + c.attempts.length, 0),
      answers: tally(refundCallers),
      told: refundCallers.filter((c) => c.final?.status === 200 || c.final?.status === 201).length,
      refused: refundCallers.filter((c) => c.final?.type === '/problems/refund-exceeds-charge').length,
      gaveUp: refundCallers.filter((c) => c.gaveUp).length,
      secondsToAnswer: spread(refundSeconds),
      bankRefunds: run.refunds.bank.refunds,
      bankCents: run.refunds.bank.cents,
    },
  };
}

/** p50, p99 and the longest, in seconds to a tenth. */
function spread(seconds: number[]): { p50: number; p99: number; max: number } {
  const tenth = (value: number) => Math.round(value * 10) / 10;
  return {
    p50: tenth(percentile(seconds, 50)),
    p99: tenth(percentile(seconds, 99)),
    max: tenth(Math.max(0, ...seconds)),
  };
}

/** The failing orders, one block each, for the console (and the bench's non-zero exit). */
export function describeFailures(results: ChaosResults): string {
  const lines = results.checks
    .filter((check) => check.failing.length > 0)
    .map((check) => `FAILED: ${check.name}: ${check.failing.join(', ')}`);
  for (const history of results.failures) {
    lines.push(
      '',
      `${history.orderNo}: fault ${history.fault}${history.faultClearedAt === undefined ? '' : `, taken off at +${(history.faultClearedAt / 1000).toFixed(3)} s`}`,
      `  order: ${JSON.stringify(history.order)}`,
      `  dedup row: ${JSON.stringify(history.dedupRow ?? null)}`,
      `  charges: ${JSON.stringify(history.charges)}`,
      `  payment.paid outbox events: ${history.outboxEvents}`,
      ...(history.refunds
        ? [
            `  ledger: ${JSON.stringify(history.refunds.ledger)}`,
            `  refunds: ${JSON.stringify(history.refunds.rows)}`,
            `  bank refunds: ${JSON.stringify(history.refunds.bank)}`,
          ]
        : []),
      ...history.callers.flatMap((c) => [`  ${c.clientId} (key ${c.key}):`, ...c.attempts.map((a) => `    ${a}`)]),
    );
  }
  return lines.join('\n');
}

/** Section 6 of bench/results.md. */
export function chaosSection(r: ChaosResults, heading = '## 6. Chaos storm'): string {
  const row = (kind: FaultKind) =>
    `| ${FAULT_NAMES[kind]} | ${r.faults[kind].planned} | ${kind === 'none' ? '' : r.faults[kind].injected} | ${r.faults[kind].takenOver} |`;
  const unexpected = Object.entries(r.answers).filter(([name]) => /^5/.test(name) && name !== '503');
  const answers = Object.entries(r.answers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name}: ${n}`)
    .join(', ');
  const statuses = Object.entries(r.statuses)
    .map(([status, n]) => `${status} ${n}`)
    .join(', ');
  const settled =
    r.settledAfterSeconds === null ? `NOT within ${SETTLE_TIMEOUT_MS / 1000} s` : `${r.settledAfterSeconds} s`;
  const restarts = r.appRestartSeconds.length
    ? `down ${r.appRestartSeconds.join(', ')} s from the kill until it answered again`
    : 'none needed';
  const checks = r.checks
    .map(
      (check) =>
        `- ${check.failing.length === 0 ? 'ok' : `**FAILED** for ${check.failing.length} order(s) (${check.failing.slice(0, 5).join(', ')}${check.failing.length > 5 ? ', …' : ''})`}: ${check.name}`,
    )
    .join('\n');
  return `${heading}

${r.orders} orders, each paid by ${r.callersPerOrder} callers at once over HTTP (each with its own X-Client-Id and Idempotency-Key,
retrying with the same key on 409, 503, a dropped connection or its own ${CLIENT_TIMEOUT_MS / 1000} s timeout, until a final answer or
${CALLER_DEADLINE_MS / 1000} s), the orders started evenly over ${r.launchSeconds} s; a lease of ${r.leaseMs} ms; for each order a configuration of the defences
and one fault, drawn at random (seed ${r.seed}; \`BENCH_CHAOS_SEED=${r.seed}\` draws the same). The configurations are those the proof matrix
declares safe from a second charge for callers with keys of their own:

| configuration | orders | charges | orders charged twice |
|---|---:|---:|---:|
${Object.entries(r.configurations)
  .map(([name, c]) => `| ${name} | ${c.orders} | ${c.charges} | ${c.doubleCharges} |`)
  .join('\n')}

The faults, each on the order's first attempt (a crash taker's on its first taker too):

| fault | orders | injected | claim taken over |
|---|---:|---:|---:|
${FAULT_KINDS.map(row).join('\n')}
| Redis stopped and started again (empty: it keeps no data) | | ${r.redisRestarts} (down ${r.redisDownSeconds} s, ${r.redisAnswered503} payments answered 503) | |
| PostgreSQL stopped and started again | | ${r.postgresRestarts} (down ${r.postgresDownSeconds} s, ${r.postgresAnswered503} payments answered 503) | |

"Injected": the order was claimed with its fault on. "Claim taken over": its fencing token rose past the first claim (a
duplicate or the reconciler took a stalled, dead or unknown claim over; an order without a fault may be among them, its
attempt killed by another order's crash, or cut off by an outage). The crash faults killed the app **${r.appCrashes}** time(s) (fewer than the crash
orders when two were claimed in one life: the first to reach its crash point kills the other's attempt with it); each
time it was started again under the same INSTANCE_NAME and settled its previous life's claims at start-up (${restarts}).
Beside them the app was killed **${r.randomKills}** time(s) at a random moment, whatever it was doing (takeovers, the reconciler's sweep,
payments at the bank). Once settled, every payment.paid event was relayed to the Redis stream and delivered to the send-receipt
consumer group.

Payments sent: **${r.requests} HTTP requests** (${answers}; "dropped": a refused or cut connection, "timeout": the client's own).
Callers with a final answer: ${r.callersAnswered} of ${r.callers} (time to it p50 ${r.secondsToAnswer.p50} s, p99 ${r.secondsToAnswer.p99} s, max ${r.secondsToAnswer.max} s);
gave up at the deadline: ${r.callersGaveUp}; refused with another 4xx: ${r.callersRefused}. ${
    unexpected.length === 0
      ? 'No answer was a 5xx other than 503.'
      : `**Unexpected answers: ${unexpected.map(([name, n]) => `${n} × ${name}`).join(', ')}** (a fault the app did not name; its log: .data/bench/chaos-app.log).`
  }
The storm lasted ${r.stormSeconds} s (until the last caller had its answer or gave up); every order was settled **${settled}**
after it ${
    r.settledAfterSeconds === 0
      ? "(already: the callers' retries had settled every order by then)"
      : "(the app's reconciler runs every 5 s; a charge that may still land waits for the bank's 10 s settlement window)"
  }.

**Double charges: ${r.doubleCharges}** (orders with more than one charge; must be 0). Orders: ${statuses}.

Refunds, in the same storm: once a caller was told its order was paid, ${r.refunds.orders} of the orders (drawn from the seed) were refunded
by ${REFUND_INTENTS.reduce((n, intent) => n + intent.callers.length, 0)} callers at once: ${REFUND_INTENTS.map((intent) => `${intent.callers.length === 1 ? 'one' : `${intent.callers.length} operators with one request id`} for ${dollars(intent.amountCents)}`).join(', ')}
(the last with the first two more than the $${(AMOUNT_CENTS / 100).toFixed(2)} charge, so the ledger must refuse one of the three), each retrying with its
request id as the payments' callers do, through the same outages and kills (no fault of their own: the race explorer's
schedules put the bank's refund faults between every step). ${r.refunds.requests} HTTP requests (${Object.entries(
    r.refunds.answers,
  )
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name}: ${n}`)
    .join(
      ', ',
    )}); of ${r.refunds.callers} callers, ${r.refunds.told} were told a refund, ${r.refunds.refused} "more than is left", ${r.refunds.gaveUp} gave up
(time to a final answer p50 ${r.refunds.secondsToAnswer.p50} s, p99 ${r.refunds.secondsToAnswer.p99} s). The bank made **${r.refunds.bankRefunds} refunds**, ${dollars(r.refunds.bankCents)} in all.

Invariants, checked in SQL on the bench database once settled:
${checks}
`;
}

const dollars = (cents: number) => `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`;
