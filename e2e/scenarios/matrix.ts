// The proof matrix, declared: for every source of duplicates, which defences stop it and what the
// customer then sees. It is the mission's table (mission.md, "The four layers") applied scenario by
// scenario; every cell of the run is asserted against it, and a defence that works where it was declared
// not to is a failure too: the scenario would not exercise what it claims.
import {
  ALL_LAYERS_OFF,
  ALL_LAYERS_ON,
  DUPLICATE_ANSWERS,
  type DuplicateAnswer,
  type Faults,
  KEY_STRATEGIES,
  type KeyStrategy,
  type Layers,
  onlyLayers,
  REFUND_KEY_STRATEGIES,
  RELEASE_RULES,
  type RefundKeyStrategy,
  type ReleaseRule,
} from '../../lib/lab/settings';

export type { Layers };
/** The switches in the order a request meets them. */
export const SWITCHES = ['pendingUi', 'token', 'requestKey', 'stateMachine', 'uniqueConstraint', 'bankKey'] as const;
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
  { id: 'bank-key', title: '5 Bank key only', layers: onlyLayers('bankKey') },
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
  /** Further lab settings of the scenario's order: a lease, a fault of the recovery path. */
  lab?: { faults?: Partial<Faults>; claims?: { leaseMs: number } };
  /**
   * Every cell of the row comes from one run, in one test: an event too heavy to stage eight times (a Redis
   * failover) strikes the eight orders, one per configuration, at once. Each cell is still its own order.
   */
  oneRun?: true;
};

// Layer 5 answers every duplicate that reaches the bank with the first charge, once the bank has answered:
// a duplicate that arrives while the first is still running waits for the bank, then gets that charge.
const REPLAYED_BY_SERVER: Partial<Record<Switch, Sees>> = {
  requestKey: 'first outcome',
  stateMachine: 'first outcome',
  uniqueConstraint: 'first outcome',
  bankKey: 'first outcome',
};
const WHILE_RUNNING: Partial<Record<Switch, Sees>> = {
  requestKey: 'in progress',
  stateMachine: 'in progress',
  uniqueConstraint: 'in progress',
  bankKey: 'first outcome',
};

// The recovery path: a claim that dies, and what cleans up after it. The order's lease is 1 s.
const RECOVERY_LEASE = { leaseMs: 1_000 };

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
    // Each tab has its own page token and its own session-scoped key: only the order's state stops it, or
    // the bank's key (the second tab waits for the bank, and gets the first charge).
    stoppedBy: { stateMachine: 'in progress', uniqueConstraint: 'in progress', bankKey: 'first outcome' },
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
    bankLatencyMs: 2_500, // the refreshed page renders on the server: the first payment must still be running
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
    // Unstopped, both instances charge, and both time out: the caller gets a 504, and two charges. The
    // bank's key alone keeps the second charge off the card, but b waits for the slow bank too: a 504 again.
    stoppedBy: { ...REPLAYED_BY_SERVER, bankKey: 'error' },
    unstopped: 'error',
    bankLatencyMs: 2_600,
  },
  {
    id: 'failover',
    title: 'Instance killed mid-payment, the gateway fails over',
    source: 4,
    // Instance a dies (SIGKILL) holding the payment. The retries on b are "in progress" until the claim's
    // lease runs out; then b takes the dead claim over and asks the bank (layer 2 about its key's charges,
    // layers 3-4 about the order's), finds a's charge and answers with it. Layer 5: the bank returns it.
    stoppedBy: REPLAYED_BY_SERVER,
    unstopped: 'paid',
    // Long enough to kill a while it waits, short enough that b answers well within the gateway's 2 s.
    bankLatencyMs: 1_000,
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
  {
    id: 'stall-takeover',
    title: 'Attempt stalls past its lease while a duplicate takes over',
    source: 4,
    // The first attempt pauses 2.5 s between its claim and the bank; its client's retry (same key) comes once
    // the test sees the first's claims past their lease, takes the abandoned claims over and pays. The first
    // attempt wakes up: its claim was taken over, and the bank would refuse its fencing token anyway. Its
    // client, asking once more, gets the one charge.
    stoppedBy: REPLAYED_BY_SERVER,
    unstopped: 'paid',
    bankLatencyMs: 0,
    lab: { faults: { stallBeforeBankMs: 2_500 }, claims: RECOVERY_LEASE },
  },
  {
    id: 'dead-claim',
    title: 'Two duplicates find a dead claim at once',
    source: 4,
    // The first attempt stalls past its lease (to everyone else, dead). Two more payers of the order, each
    // with its own key, find its claim dead at the same moment: one takes it over and pays, the other is
    // told "in progress" and then gets that payment. Keys differ: layer 2 cannot see it.
    stoppedBy: { stateMachine: 'first outcome', uniqueConstraint: 'first outcome', bankKey: 'first outcome' },
    unstopped: 'paid',
    bankLatencyMs: 0,
    lab: { faults: { stallBeforeBankMs: 2_500 }, claims: RECOVERY_LEASE },
  },
  {
    id: 'late-charge',
    title: 'The bank charges after the merchant gave up',
    source: 2,
    // The bank call times out before the bank charges; the charge lands 1.5 s later. The client retries
    // with its key. "No charge yet" is not "never charged": the defences wait for the bank, find the charge
    // and answer with it. Unstopped, the retry charges, and then the late charge lands too.
    stoppedBy: REPLAYED_BY_SERVER,
    unstopped: 'paid',
    bankLatencyMs: 0,
    lab: { faults: { bankLateChargeMs: 1_500 } },
  },
  {
    id: 'redis-failover',
    title: 'Redis fails over mid-payment and loses the claim',
    source: 4,
    // Through Redis Sentinel: each payment claims its key on the primary and waits at the bank; the primary
    // dies before its claims reached the replica (the test holds that window open), and Sentinel promotes
    // the replica. The client's retry, with the same key, finds no claim: layer 2 lets it through to the
    // bank. The order's claim (layers 3, 4) is in PostgreSQL and the bank's key (5) at the bank: neither
    // was in Redis. One failover for the eight orders (redis-failover.spec.ts).
    stoppedBy: { stateMachine: 'first outcome', uniqueConstraint: 'first outcome', bankKey: 'first outcome' },
    unstopped: 'paid',
    bankLatencyMs: 3_000,
    // The order's own lease, longer than the bank holds it: no reconciler of any app takes the claim over.
    lab: { claims: { leaseMs: 10_000 } },
    oneRun: true,
  },
];

// The database-failover matrix: the Redis failover row's mirror. PostgreSQL, through Patroni (a primary, a streaming
// replica, HAProxy in front), loses its primary while the eight payments wait at the bank; the replica is promoted.
// The bank keeps its books in a database of its own, which does not fail over (BANK_DATABASE_URL). It runs in
// `npm run scenarios` only (its own servers: etcd, two Patroni nodes, HAProxy; about a minute a row).

/** A row of the database-failover matrix: one failover, replication asynchronous or synchronous. */
export type DatabaseFailoverRow = Scenario & { synchronous: boolean };

export const DATABASE_FAILOVER_ROWS: DatabaseFailoverRow[] = [
  {
    id: 'pg-failover-async',
    title: 'PostgreSQL fails over, replication asynchronous',
    source: 4,
    synchronous: false,
    // The primary acknowledged the claims (layers 3 and 4) before the replica had them: promoted, it never saw
    // them, and the order is unpaid again. The client's retry, with its key, is stopped by what was not in
    // PostgreSQL: the key's claim in Redis (layer 2) and the bank's key (5). Layers 3 and 4 alone charge again.
    stoppedBy: { requestKey: 'first outcome', bankKey: 'first outcome' },
    unstopped: 'paid',
    // The eight charges are counted and the claims read before the primary is killed, all while the bank holds them.
    bankLatencyMs: 5_000,
    // The order's own lease, longer than the bank holds it: the first attempt's claim is not given up for dead.
    lab: { claims: { leaseMs: 15_000 } },
    oneRun: true,
  },
  {
    id: 'pg-failover-sync',
    title: 'PostgreSQL fails over, replication synchronous',
    source: 4,
    synchronous: true,
    // A commit returned only once the replica had it on disk: the promoted replica holds every claim, and layers 3
    // and 4 stop the retry as they would have on the old primary.
    stoppedBy: {
      requestKey: 'first outcome',
      stateMachine: 'first outcome',
      uniqueConstraint: 'first outcome',
      bankKey: 'first outcome',
    },
    unstopped: 'paid',
    bankLatencyMs: 5_000,
    lab: { claims: { leaseMs: 15_000 } },
    oneRun: true,
  },
];

// The key-strategy matrix: the article's first detail. Layer 2 alone (the pending UI off too), under each
// way of making its key. A strategy stops a duplicate only if the retry carries the same key: the business
// identity always does; a hash of the parameters does only when the retry resends the very same bytes
// (its timestamp included); a key minted per submit never does.

/** Layer 2 alone: the configuration every cell of the key-strategy matrix runs under. */
export const KEY_STRATEGY_LAYERS = onlyLayers('requestKey');

export const KEY_STRATEGY_COLUMNS: Array<{ id: KeyStrategy; title: string }> = [
  { id: 'business', title: 'Business identity' },
  { id: 'paramHash', title: 'Hash of the parameters' },
  { id: 'perSubmit', title: 'New key per submit' },
];

/** A scenario that only the key-strategy matrix runs: a client that resends its request's very bytes. */
export const CLIENT_RESEND: Scenario = {
  id: 'client-resend',
  title: 'HTTP client resends the same request, byte for byte',
  source: 2,
  // A transport-level retry (the timestamp in the body is the first attempt's): the same parameters.
  stoppedBy: REPLAYED_BY_SERVER,
  unstopped: 'paid',
  bankLatencyMs: 1_200,
};

export type KeyStrategyRow = {
  scenario: Scenario;
  /** The strategies under which the retry carries the first request's key: layer 2 sees the duplicate. */
  sameKeyUnder: KeyStrategy[];
  /** Why the others miss it, in the table's words. */
  why: string;
};

const byId = (id: string): Scenario => {
  const found = SCENARIOS.find((s) => s.id === id);
  if (!found) throw new Error(`scenario ${id} is not declared`);
  return found;
};

export const KEY_STRATEGY_ROWS: KeyStrategyRow[] = [
  {
    scenario: byId('double-click'),
    sameKeyUnder: ['business'],
    why: 'the second click is a new submit: a new timestamp, a new minted key',
  },
  {
    scenario: byId('double-enter'),
    sameKeyUnder: ['business'],
    why: 'the second Enter is a new submit: a new timestamp, a new minted key',
  },
  {
    scenario: byId('refresh'),
    sameKeyUnder: ['business'],
    why: 'the refreshed page submits anew: a new timestamp, a new minted key',
  },
  {
    scenario: byId('lost-response'),
    sameKeyUnder: ['business'],
    why: 'the customer’s retry is a new submit: a new timestamp, a new minted key',
  },
  {
    scenario: byId('client-retry'),
    sameKeyUnder: ['business'],
    why: 'the client stamps each attempt anew (requestedAt), and the server mints a key per request',
  },
  {
    scenario: CLIENT_RESEND,
    sameKeyUnder: ['business', 'paramHash'],
    why: 'the same bytes hash to the same key; a key minted per request is still new',
  },
];

// The release-rule matrix: the article's third detail. Every defence of the merchant's on, the bank's key (5)
// off: it would return the first charge to any second one, and hide what each rule did. A fault strikes the
// first request of an order only; then its client retries with the same key until it gets a final answer,
// waiting as Retry-After says. The columns are the lab's `claims.release`; the lease is short (the "expiry" a
// claim left by `never` waits out).

/** Layers 0-4: the configuration every cell of the release-rule matrix runs under. */
export const RELEASE_LAYERS: Layers = { ...ALL_LAYERS_ON, bankKey: false };
/**
 * The claims' lease in these cells: how long a claim the rule `never` left keeps the customer out. Far longer
 * than a payment takes even on a busy machine: a first request still running past it would be recovered by the
 * reconciler's sweep (as it should), and the cell would show the recovery, not the rule.
 */
export const RELEASE_LEASE_MS = 5_000;

export const RELEASE_COLUMNS: Array<{ id: ReleaseRule; title: string }> = [
  { id: 'noMoneyMoved', title: 'Only when no money moved' },
  { id: 'anyError', title: 'On any error' },
  { id: 'never', title: 'Never' },
];

/**
 * What the customer (the retrying client) got in the end, and whether it was told "in progress" first: a claim
 * left in place, or a charge in doubt, refuses the retries until it is settled or expires.
 */
export type ReleaseSees = Sees | `in progress, then ${Sees}`;
export type ReleaseCell = { charges: Charges; sees: ReleaseSees };

export type ReleaseRow = {
  id: string;
  title: string;
  /** The fault of the order's first request (cleared before the retries). */
  fault: Partial<Faults>;
  cells: Record<ReleaseRule, ReleaseCell>;
  /** What the rules do here, in the table's words. */
  why: string;
};

export const RELEASE_ROWS: ReleaseRow[] = [
  {
    id: 'notify-fails',
    title: 'The charge goes through, then notifying a downstream system fails',
    fault: { notifyFailsAfterCharge: true },
    cells: {
      noMoneyMoved: { charges: '1', sees: 'first outcome' },
      anyError: { charges: 'more', sees: 'paid' },
      never: { charges: '1', sees: 'in progress, then first outcome' },
    },
    why: 'money moved before the failure: kept, the retry gets the charge; given back, the retry charges again; left, the retry waits out the lease and the bank is asked',
  },
  {
    id: 'bank-error',
    title: 'The bank fails before charging',
    fault: { bankFailure: 'error' },
    cells: {
      noMoneyMoved: { charges: '1', sees: 'paid' },
      anyError: { charges: '1', sees: 'paid' },
      never: { charges: '1', sees: 'in progress, then paid' },
    },
    why: 'nothing moved: given back, the retry pays at once; left, the customer is refused until the lease runs out',
  },
  {
    id: 'unknown-outcome',
    title: 'The bank’s answer is unknown (it charges after the merchant gave up)',
    fault: { bankLateChargeMs: 2_000 },
    cells: {
      noMoneyMoved: { charges: '1', sees: 'in progress, then first outcome' },
      anyError: { charges: 'more', sees: 'paid' },
      never: { charges: '1', sees: 'in progress, then first outcome' },
    },
    why: 'the card may have been charged: kept in doubt, the retry waits for the bank and gets its charge; given back, the retry charges, and the late charge lands too',
  },
];

/** The tag of every cell of the release-rule matrix. */
export const RELEASE_TAG = '@release-rule';

// The answer matrix: the article's second detail. Every defence on; the bank answers 4 s after charging, and
// each of the project's five retrying-client recipes (docs/clients.md) gives up on an attempt after 2.5 s, so its
// first attempt is charged and times out, and its retries (same key) arrive while it runs and after it is done.
// The columns are the lab's `answers.duplicate`: what a duplicate of the finished payment is told.

export const ANSWER_COLUMNS: Array<{ id: DuplicateAnswer; title: string }> = [
  { id: 'firstResult', title: 'The first result' },
  { id: 'error', title: 'An error' },
];

/** How many requests a recipe sends for one intent at most: its first attempt and its five retries. */
export const RECIPE_BUDGET = 6;

/** What the client ended with: the charge (its id, as the card statement has it), or its last 409. */
export type AnswerSees = 'learned the charge' | `gave up after ${typeof RECIPE_BUDGET} requests`;

export const ANSWER_ROWS: Array<{ id: string; title: string; client: 'undici' | 'got' | 'ky' | 'axios' | 'fetch' }> = [
  { id: 'client-undici', title: 'undici RetryAgent', client: 'undici' },
  { id: 'client-got', title: 'got', client: 'got' },
  { id: 'client-ky', title: 'ky', client: 'ky' },
  { id: 'client-axios', title: 'axios with axios-retry', client: 'axios' },
  { id: 'client-fetch', title: 'fetch in a loop', client: 'fetch' },
];

/** Declared: with the first result every recipe learns its charge; with an error none does, and each spends its budget. */
export function expectedAnswerCell(answer: DuplicateAnswer): { charges: Charges; sees: AnswerSees } {
  return answer === 'firstResult'
    ? { charges: '1', sees: 'learned the charge' }
    : { charges: '1', sees: `gave up after ${RECIPE_BUDGET} requests` };
}

/** The tag of every cell of the answer matrix. */
export const ANSWER_TAG = '@duplicate-answer';

// The refund-key matrix: the article's first detail, its second half. An order may be refunded more than once, so
// the order number is the wrong key for a refund, and so is a hash of its parameters; only a request id the caller
// creates once for the refund and keeps is right. Every defence is on; the columns are the lab's `keys.refunds`,
// which makes the refund's identity at every layer. Each cell: what the bank gave back, against what the customer
// is owed. A $42.00 paid order; the refund form stamps each submit (`submittedAt`), an API client its retries
// (`requestedAt`), as many forms and SDKs do.

export const REFUND_KEY_COLUMNS: Array<{ id: RefundKeyStrategy; title: string }> = [
  { id: 'requestId', title: 'The refund’s request id' },
  { id: 'orderNo', title: 'The order number' },
  { id: 'paramHash', title: 'Hash of the parameters' },
];

export type RefundRow = {
  id: string;
  title: string;
  /** How the refunds are asked for: the back office's form, the API, the refund worker's queue. */
  channel: 'form' | 'api' | 'queue';
  /** The amount of each refund asked for. */
  amountCents: number;
  /** What the customer is owed in the end. */
  owedCents: number;
  /** The refunds the bank makes, declared per strategy. */
  refunds: Record<RefundKeyStrategy, number>;
  /** Why the wrong keys fail here (or do not), in the table's words. */
  why: string;
};

export const REFUND_ROWS: RefundRow[] = [
  {
    id: 'refund-double-click',
    title: 'Double click on the refund form',
    channel: 'form',
    amountCents: 500,
    owedCents: 500,
    refunds: { requestId: 1, orderNo: 1, paramHash: 2 },
    why: 'the second submit carries the form’s request id; its parameters carry a new stamp',
  },
  {
    id: 'refund-two-operators',
    title: 'Two operators submit the same refund at once',
    channel: 'form',
    amountCents: 500,
    owedCents: 500,
    refunds: { requestId: 1, orderNo: 1, paramHash: 2 },
    why: 'both submit the one draft, its request id; each stamps its own submit',
  },
  {
    id: 'refund-lost-response',
    title: 'The refund’s answer is lost; the client retries, stamped anew',
    channel: 'api',
    amountCents: 500,
    owedCents: 500,
    refunds: { requestId: 1, orderNo: 1, paramHash: 2 },
    why: 'the retry sends the same Idempotency-Key, and a new requestedAt',
  },
  {
    id: 'refund-reload',
    title: 'The refund form reloaded and submitted again',
    channel: 'form',
    amountCents: 500,
    owedCents: 500,
    refunds: { requestId: 1, orderNo: 1, paramHash: 2 },
    why: 'the reloaded form is the same draft; the resubmit is a new stamp',
  },
  {
    id: 'refund-two-partial',
    title: 'Two legitimate partial refunds of the same amount',
    channel: 'api',
    amountCents: 500,
    owedCents: 1_000,
    refunds: { requestId: 2, orderNo: 1, paramHash: 1 },
    why: 'two request ids, the same parameters: the order number and the hash make them one refund',
  },
  {
    id: 'refund-too-much',
    title: 'A refund of more than is left',
    channel: 'api',
    amountCents: 3_000,
    owedCents: 3_000,
    refunds: { requestId: 1, orderNo: 1, paramHash: 1 },
    why: 'after $30.00, $20.00 more is refused: by the ledger (only $12.00 is left), or as another amount for the same key',
  },
  {
    id: 'refund-queue-twice',
    title: 'The queue delivers a refund message twice',
    channel: 'queue',
    amountCents: 500,
    owedCents: 500,
    refunds: { requestId: 1, orderNo: 1, paramHash: 1 },
    why: 'the redelivery is the same message: its request id, and the same bytes to hash',
  },
];

/** What the customer ended with, in the data's words (the page words it): "got 500 cents back, as owed". */
export function refundSees(refundedCents: number, owedCents: number): string {
  return `got ${refundedCents} cents back, ${refundedCents === owedCents ? 'as owed' : `owed ${owedCents} cents`}`;
}

/** Declared: the bank's refunds under this strategy, and what the customer got back for them. */
export function expectedRefundCell(row: RefundRow, strategy: RefundKeyStrategy): { charges: Charges; sees: string } {
  const count = row.refunds[strategy];
  return { charges: chargesBucket(count), sees: refundSees(count * row.amountCents, row.owedCents) };
}

/** The tag of every cell of the refund-key matrix. */
export const REFUND_TAG = '@refund-key';

export { REFUND_KEY_STRATEGIES, type RefundKeyStrategy };

// Reproducing a row: every scenario's describe carries the tag `@<id>`, so one grep selects exactly its
// tests (its eight configurations, and its key-strategy cells where it has some). The /scenarios page, the
// matrix reporter's tables and the guides all print these; test/docs/test-selection.test.ts checks that
// each selects exactly its row.

/** The Playwright tag of a scenario's row. */
export const rowTag = (id: string): `@${string}` => `@${id}`;

/** The tag of the key-strategy cells that are runs of their own (every column but the proof matrix's own). */
export const KEY_STRATEGY_TAG = '@key-strategy';

/**
 * The proof matrix's columns that `npm test` runs on every row: all on (the duplicate stopped) and all off (the
 * card charged again), so that each scenario is seen stopped and seen failing in every run of the suite. The
 * single-layer columns, which say which defence alone stops what, carry FULL_MATRIX_TAG: `npm run scenarios`
 * and CI run them (`npm test` stays within its minutes: README, Testing).
 */
export const SAMPLED_CONFIGURATIONS: readonly string[] = ['all-on', 'all-off'];
export const FULL_MATRIX_TAG = '@full-matrix';

/** The Playwright arguments that select one row: `-g "@<id>"`. */
export const rowGrep = (id: string): string => `-g "${rowTag(id)}"`;

/** The command that runs one row of the matrix (and prints it). */
export const rowCommand = (id: string): string => `npm run scenarios -- ${rowGrep(id)}`;

export type Cell = { charges: Charges; sees: Sees; answeredBy?: Switch };

/** The declared outcome of a key-strategy cell: layer 2 stops the duplicate when the retry's key is the same. */
export function expectedKeyCell(row: KeyStrategyRow, strategy: KeyStrategy): Cell {
  return expectedCell(row.scenario, row.sameKeyUnder.includes(strategy) ? KEY_STRATEGY_LAYERS : ALL_LAYERS_OFF);
}

export type { DuplicateAnswer, KeyStrategy, ReleaseRule };
export { DUPLICATE_ANSWERS, KEY_STRATEGIES, RELEASE_RULES };

/** The declared outcome of a scenario under a configuration: the first defence (in request order) that stops it. */
export function expectedCell(scenario: Scenario, layers: Layers): Cell {
  const stopper = SWITCHES.find((layer) => layers[layer] && scenario.stoppedBy[layer] !== undefined);
  const sees = stopper ? scenario.stoppedBy[stopper] : undefined;
  return stopper && sees ? { charges: '1', sees, answeredBy: stopper } : { charges: 'more', sees: scenario.unstopped };
}

export function chargesBucket(count: number): Charges {
  return count === 0 ? '0' : count === 1 ? '1' : 'more';
}
