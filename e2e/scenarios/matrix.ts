// The proof matrix, declared: for every source of duplicates, which defences stop it and what the
// customer then sees. It is the mission's table (mission.md, "The four layers") applied scenario by
// scenario; every cell of the run is asserted against it, and a defence that works where it was declared
// not to is a failure too: the scenario would not exercise what it claims.
import { ALL_LAYERS_OFF, ALL_LAYERS_ON, type Layers, onlyLayers } from '../../lib/lab/settings';

export type { Layers };
/** The switches in the order a request meets them. */
export const SWITCHES = ['pendingUi', 'token', 'requestKey', 'stateMachine', 'uniqueConstraint'] as const;
export type Switch = (typeof SWITCHES)[number];

/** What the customer (or the calling service) is shown at the end of the scenario. */
export type Sees = 'paid' | 'first outcome' | 'already submitted' | 'in progress' | 'error';
/** What the card network recorded. */
export type Charges = '0' | '1' | 'more';

export const CONFIGURATIONS: Array<{ id: string; title: string; layers: Layers }> = [
  { id: 'all-on', title: 'All on', layers: ALL_LAYERS_ON },
  { id: 'pending-ui', title: '0 Pending UI only', layers: onlyLayers('pendingUi') },
  { id: 'token', title: '1 Token only', layers: onlyLayers('token') },
  { id: 'request-key', title: '2 Request key only', layers: onlyLayers('requestKey') },
  { id: 'state-machine', title: '3 State machine only', layers: onlyLayers('stateMachine') },
  { id: 'unique-constraint', title: '4 Unique constraint only', layers: onlyLayers('uniqueConstraint') },
  { id: 'all-off', title: 'All off', layers: ALL_LAYERS_OFF },
];

export type Scenario = {
  id: string;
  title: string;
  /** The article's source: 1 the person, 2 the client's network, 3 infrastructure retries, 4 failover. */
  source: 1 | 2 | 3 | 4;
  /** What is counted: the card's charges (default), or the receipts the customer got. */
  counts?: 'charges' | 'receipts';
  /** The defences that stop this duplicate, and what the customer sees when each one does. */
  stoppedBy: Partial<Record<Switch, Sees>>;
  /** When none of them is on: the card is charged again, and this is what the customer sees. */
  unstopped: Sees;
  /** The bank's latency for this scenario (a stall makes the duplicate arrive while the first is running). */
  bankLatencyMs: number;
};

const REPLAYED_BY_SERVER: Partial<Record<Switch, Sees>> = {
  requestKey: 'first outcome',
  stateMachine: 'first outcome',
  uniqueConstraint: 'first outcome',
};
const WHILE_RUNNING: Partial<Record<Switch, Sees>> = {
  requestKey: 'in progress',
  stateMachine: 'in progress',
  uniqueConstraint: 'in progress',
};

export const SCENARIOS: Scenario[] = [
  {
    id: 'double-click',
    title: 'Double click in one tab',
    source: 1,
    // Next.js sends a page's server actions one at a time: the second click arrives after the first.
    stoppedBy: { pendingUi: 'paid', token: 'already submitted', ...REPLAYED_BY_SERVER },
    unstopped: 'paid',
    bankLatencyMs: 600,
  },
  {
    id: 'double-enter',
    title: 'Enter pressed twice',
    source: 1,
    stoppedBy: { pendingUi: 'paid', token: 'already submitted', ...REPLAYED_BY_SERVER },
    unstopped: 'paid',
    bankLatencyMs: 600,
  },
  {
    id: 'two-tabs',
    title: 'Two tabs (two sessions) pay at once',
    source: 1,
    // Each tab has its own page token and its own session-scoped key: only the order's state stops it.
    stoppedBy: { stateMachine: 'in progress', uniqueConstraint: 'in progress' },
    unstopped: 'paid',
    bankLatencyMs: 1_200,
  },
  {
    id: 'refresh',
    title: 'Stalled payment, refresh, pay again',
    source: 1,
    // A refreshed page gets a new token and a fresh button: layers 0 and 1 cannot see the first request.
    stoppedBy: WHILE_RUNNING,
    unstopped: 'paid',
    bankLatencyMs: 1_500,
  },
  {
    id: 'back-button',
    title: 'Back button after paying, then Pay',
    source: 1,
    // The router restores the old page, with its spent token.
    stoppedBy: { token: 'already submitted', ...REPLAYED_BY_SERVER },
    unstopped: 'paid',
    bankLatencyMs: 0,
  },
  {
    id: 'lost-response',
    title: 'Response lost, the customer reloads and retries',
    source: 2,
    stoppedBy: REPLAYED_BY_SERVER,
    unstopped: 'paid',
    bankLatencyMs: 0,
  },
  {
    id: 'client-retry',
    title: 'API client times out and retries with the same key',
    source: 2,
    // A service call carries no page token and has no button.
    stoppedBy: REPLAYED_BY_SERVER,
    unstopped: 'paid',
    bankLatencyMs: 1_200,
  },
  {
    id: 'burst',
    title: 'Burst of 20 concurrent API requests',
    source: 3,
    stoppedBy: WHILE_RUNNING,
    unstopped: 'paid',
    bankLatencyMs: 1_000,
  },
  {
    id: 'expired-token',
    title: 'Token expired, then reload and pay',
    source: 1,
    // The stale page is refused (nothing charged); the reloaded page pays once.
    stoppedBy: { token: 'paid', ...REPLAYED_BY_SERVER },
    unstopped: 'paid',
    bankLatencyMs: 0,
  },
  {
    id: 'foreign-token',
    title: 'Another session’s token, then reload and pay',
    source: 1,
    stoppedBy: { token: 'paid', ...REPLAYED_BY_SERVER },
    unstopped: 'paid',
    bankLatencyMs: 0,
  },
  {
    id: 'gateway-retry',
    title: 'Gateway times out and retries on the other instance',
    source: 3,
    // The gateway (2 s timeout) sends the same POST to instance b while a is still waiting for the bank.
    // Unstopped, both instances charge, and both time out: the caller gets a 504, and two charges.
    stoppedBy: REPLAYED_BY_SERVER,
    unstopped: 'error',
    bankLatencyMs: 2_600,
  },
  {
    id: 'failover',
    title: 'Instance killed mid-payment, the gateway fails over',
    source: 4,
    // Instance a dies (SIGKILL) holding the payment. Its request key's claim lives on until the lease runs
    // out, and then the retry charges again: layer 2 alone does not survive a crash. The database layers
    // keep the claim, and the reconciler (at a's restart, or once the lease is over) finds a's charge.
    stoppedBy: { stateMachine: 'first outcome', uniqueConstraint: 'first outcome' },
    unstopped: 'paid',
    bankLatencyMs: 1_500,
  },
  {
    id: 'queue-redelivery',
    title: 'Receipt consumer dies before its ack, the message is redelivered',
    source: 3,
    counts: 'receipts',
    // At-least-once delivery: only the dedup table (RECEIPT, order no) keeps the second delivery quiet.
    stoppedBy: { uniqueConstraint: 'paid' },
    unstopped: 'paid',
    bankLatencyMs: 0,
  },
];

export type Cell = { charges: Charges; sees: Sees; answeredBy?: Switch };

/** The declared outcome of a scenario under a configuration: the first defence (in request order) that stops it. */
export function expectedCell(scenario: Scenario, layers: Layers): Cell {
  const stopper = SWITCHES.find((layer) => layers[layer] && scenario.stoppedBy[layer] !== undefined);
  const sees = stopper ? scenario.stoppedBy[stopper] : undefined;
  return stopper && sees ? { charges: '1', sees, answeredBy: stopper } : { charges: 'more', sees: scenario.unstopped };
}

export function chargesBucket(count: number): Charges {
  return count === 0 ? '0' : count === 1 ? '1' : 'more';
}
