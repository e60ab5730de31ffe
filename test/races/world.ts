// One order of the race explorer, against the real PostgreSQL and Redis: the real pipeline, the real
// reconciler and sweep as actors under a RaceScheduler; the events that strike between their steps (the
// clock jumping past a lease or the bank's settlement window, the process restarting, Redis losing its keys,
// the hourly housekeeping); and the invariants every schedule must end with.
//
// Time is a virtual clock (leases, windows, the bank's statement all follow it), so a schedule replays
// exactly. Each world touches only its own order, its own caller's keys and its own lab settings, so many
// worlds run side by side on one database.
import { getDb } from '../../lib/db.ts';
import { parseOutcome } from '../../lib/defences/outcome.ts';
import type { RaceHook, RacePoint } from '../../lib/defences/race-points.ts';
import { attemptKeyOf } from '../../lib/defences/request-key/defence.ts';
import { decodeRecord } from '../../lib/defences/request-key/record.ts';
import { sendReceipt } from '../../lib/events/receipts.ts';
import { bootPrefix, instanceName } from '../../lib/instance.ts';
import { ALL_LAYERS_OFF, BANK_SETTLEMENT_WINDOW_MS, type Faults } from '../../lib/lab/settings.ts';
import { createOrder } from '../../lib/payments/orders.ts';
import { defaultPayOptions, type PayResult, pay } from '../../lib/payments/pay.ts';
import { type PaymentPolicy, type PolicySource, policySource, setPolicySource } from '../../lib/payments/policy.ts';
import { reconcileOrder, reconcileStalePayments } from '../../lib/payments/reconcile.ts';
import { runHousekeeping } from '../../lib/payments/retention.ts';
import { getRedis } from '../../lib/redis.ts';
import { type CallerScope, clientScope } from '../../lib/session.ts';
import { sendTwice } from './resend.ts';
import { type ActorEnd, RaceScheduler, StoreFailure } from './scheduler.ts';

/** The defences that act on the server (the token and the pending UI belong to a page). */
export const SERVER_LAYERS = ['requestKey', 'stateMachine', 'uniqueConstraint', 'bankKey'] as const;
export type ServerLayer = (typeof SERVER_LAYERS)[number];
export type ServerLayers = Record<ServerLayer, boolean>;

/** What the bank does with one attempt's charge. */
export const BANK_FAULTS = [
  'none',
  /** The bank answers "timeout" before it charges; the charge lands LATE_CHARGE_MS later. */
  'lateCharge',
  /** The bank charges, then the answer times out. */
  'timeoutAfterCharge',
  /** The bank fails before charging (nothing moved). */
  'bankError',
  /** The bank declines the card. */
  'decline',
] as const;
export type BankFault = (typeof BANK_FAULTS)[number];

export const LEASE_MS = 100;
export const LATE_CHARGE_MS = 2_000;

const BANK: Record<BankFault, Partial<Faults>> = {
  none: {},
  lateCharge: { bankLateChargeMs: LATE_CHARGE_MS },
  timeoutAfterCharge: { bankTimeoutAfterCharge: true },
  bankError: { bankFailure: 'error' },
  decline: { bankFailure: 'decline' },
};

/**
 * Where a payment attempt's store may fail (`failAt`): the operations before the bank that claim or renew its claims,
 * in Redis or PostgreSQL. It is then told its request failed (a 503), and holds no claim (nothing moved); elsewhere a
 * failure may leave a claim for the recovery path (a release that failed; after the bank, money that moved). The
 * failure is the command never reaching the store (a connection refused or lost before it), once; not a reply lost
 * after the store applied it (a claim made so would live out its lease), nor a store down for the calls after it.
 */
export const FAIL_POINTS = ['key.claim', 'order.claim', 'key.renew', 'order.renew'] as const;
export type FailPoint = (typeof FAIL_POINTS)[number];

/**
 * Where a payment attempt's Redis command may be sent twice (`resendAt`): layer 2's scripts on its key, whose answer a
 * lost connection dropped, sent again by the client (decision 041, test/races/resend.ts). The attempt gets the second
 * run's answer, and must go on as if it had the first's: not a fault it may answer with.
 */
export const RESEND_POINTS = ['key.claim', 'key.takeOver', 'key.complete'] as const;
export type ResendPoint = (typeof RESEND_POINTS)[number];

/** A store failure the schedule injected where one is meant (FAIL_POINTS): a 503, not a finding by itself. */
export function injectedFailure(error: unknown): error is StoreFailure {
  return error instanceof StoreFailure && (FAIL_POINTS as readonly string[]).includes(error.point);
}

/**
 * Who takes part. `crashAt`: the actor dies on arriving at that point (its `nth` arrival there). `failAt`: its store
 * fails at that point (its first arrival there). `resendAt`: a payment's command after that point is sent twice (its
 * first arrival there).
 */
export type ActorPlan = {
  name: string;
  crashAt?: { point: RacePoint; nth?: number };
  failAt?: { point: FailPoint };
  resendAt?: { point: ResendPoint };
} & ({ kind: 'pay'; key: string; bank?: BankFault } | { kind: 'reconcile' } | { kind: 'sweep' });

/** What may strike between two steps. */
export const EVENTS = ['lease', 'window', 'restart', 'flushRedis', 'dedupCleanup', 'retention'] as const;
export type WorldEvent = (typeof EVENTS)[number];

export const INVARIANTS = [
  'at most one charge per order wherever the matrix declares it (layer 3, 4 or 5 on; layer 2 alone: per key, while Redis keeps its keys)',
  'every charge ends recorded: a PAID order naming it, its dedup row agreeing, no claim left; no charge: no claim left',
  'nobody is told PAID without a charge, nor DECLINED by a bank call made once the order was PAID; no order ends DECLINED with a charge',
  'one payment.paid event, and one receipt, per charge',
  'a takeover never takes a live claim (one within its lease, renewed, or held by a living process)',
  'an attempt that has answered (a 503 too, its store failing before the bank) holds no claim: each is completed, given back, or kept in doubt by nobody',
  'housekeeping deletes an order only once it is settled',
  'the last retry of the intent is told the charge',
];

/** New attempt ids from `next`, each noted under `actor` in `idsOf`: whose claim a holder's id names. */
export function notingIds(next: () => string, idsOf: Map<string, Set<string>>, actor?: string): () => string {
  return () => {
    const id = next();
    if (actor) idsOf.set(actor, (idsOf.get(actor) ?? new Set()).add(id));
    return id;
  };
}

/** Whether a request key's stored record (`raw`) is a claim one of `ids` holds. */
export function keyHeldBy(raw: string | null, ids: Set<string>): boolean {
  const record = raw === null ? undefined : decodeRecord(raw);
  return record?.state === 'processing' && ids.has(record.owner);
}

/** An answered attempt's violation, if it still holds any of `held` (each claim's name, or false). */
export function stillHolding(actor: string, held: Array<string | false>): string[] {
  const names = held.filter((claim): claim is string => typeof claim === 'string');
  return names.length > 0 ? [`${actor} answered still holding ${names.join(', ')}`] : [];
}

/** A payment's claim, as the explorer reads it to judge a takeover. */
type ClaimSeen = { holder: string | null; fence: number; claimedAt: number } | undefined;

export class RaceWorld {
  readonly clock: { now: number };
  readonly scheduler: RaceScheduler;
  readonly violations: string[] = [];
  readonly ends = new Map<string, Promise<ActorEnd<unknown>>>();
  /** Every charge the bank has held for the order at some point (housekeeping must not lose one). */
  private readonly chargesSeen = new Set<string>();
  /** Holders that died with their process (a restart): their claims are dead, whatever their age. */
  private readonly deadHolders = new Set<string>();
  /** Whether Redis lost its keys: layer 2 alone then no longer promises one charge. */
  redisLost = false;
  /** Whether housekeeping pruned the order (it was settled then). */
  pruned = false;
  private lives = 0;
  private readonly keyOf = new Map<string, string>();

  private constructor(
    readonly orderNo: string,
    readonly layers: ServerLayers,
    /** Whether every payment of the schedule is one intent (one key). */
    readonly sameKey: boolean,
    /**
     * Whether its payments are checked at their claim (pay.ts's `checkAtClaim`: the order not read before the
     * defences, as an API payment runs with the lab off), where a database layer is on; else the order is read.
     */
    readonly checkAtClaim = false,
  ) {
    this.clock = { now: Date.now() };
    this.scheduler = new RaceScheduler({
      before: (actor, point) => this.beforeStep(actor, point),
      after: (actor, point) => this.afterStep(actor, point),
    });
  }

  static async create(layers: ServerLayers, sameKey: boolean, checkAtClaim = false): Promise<RaceWorld> {
    const all = { ...ALL_LAYERS_OFF, ...layers };
    const { orderNo } = await createOrder({ lab: { layers: all, claims: { leaseMs: LEASE_MS } } });
    const world = new RaceWorld(orderNo, layers, sameKey, checkAtClaim);
    if (checkAtClaim) {
      // Its owner is the world's caller, so that the claim's check meets an owner (not only an order without one).
      await getDb().order.update({ where: { orderNo }, data: { owner: world.caller } });
      await policyForEveryOrderOf(world.caller, orderNo);
    }
    return world;
  }

  readonly now = () => this.clock.now;
  get caller() {
    return clientScope(`race-${this.orderNo}`);
  }

  /** The Redis key a payment with `key` claims (layer 2, the business strategy). */
  requestKeyName(key: string): string {
    return attemptKeyOf(
      this.caller,
      { strategy: 'business', orderNo: this.orderNo, idempotencyKey: key, params: { orderNo: this.orderNo } },
      { orderNo: this.orderNo, amountCents: 4_200 },
    ).name;
  }

  /**
   * New attempt ids, of the process's current life: `<instance>.<life>.<n>`, as the real ones are (a restart
   * begins a new life, and its start-up sweep judges the older lives' claims dead).
   */
  private lifePrefix = bootPrefix();
  private ids = 0;
  readonly attemptIds = () => `${this.lifePrefix}${++this.ids}`;
  /** Each payment actor's attempt ids (its request id's): whose claim a holder's id names. */
  private readonly idsOf = new Map<string, Set<string>>();

  /** One payment attempt of this order, with its own faults and hook. */
  pay(key: string, at: RaceHook | undefined, bank: BankFault = 'none', requestId?: string): Promise<PayResult> {
    return pay(
      {
        orderNo: this.orderNo,
        caller: this.caller,
        channel: 'api',
        idempotencyKey: key,
        amountCents: 4_200,
        requestId,
      },
      {
        ...defaultPayOptions(),
        now: this.now,
        at,
        bankFaults: BANK[bank],
        attemptIds: notingIds(this.attemptIds, this.idsOf, requestId),
      },
    );
  }

  spawn(plan: ActorPlan): void {
    if (plan.kind === 'pay' && plan.resendAt) this.resends.set(plan.name, plan.resendAt.point);
    const body = (at: (point: string) => Promise<void>): Promise<unknown> => {
      const hook = at as RaceHook;
      switch (plan.kind) {
        case 'pay':
          this.keyOf.set(plan.name, this.requestKeyName(plan.key));
          return this.pay(plan.key, hook, plan.bank, plan.name);
        case 'reconcile':
          return reconcileOrder(this.orderNo, {
            leaseMs: LEASE_MS,
            now: this.now,
            at: hook,
            attemptIds: this.attemptIds,
          });
        case 'sweep':
          return reconcileStalePayments({
            now: this.now,
            at: hook,
            orderNos: [this.orderNo],
            attemptIds: this.attemptIds,
          });
      }
    };
    this.ends.set(plan.name, this.scheduler.spawn(plan.name, body, plan.crashAt, plan.failAt));
  }

  /** Something strikes between two steps. */
  async strike(event: WorldEvent): Promise<void> {
    this.scheduler.trace.push(`!${event}`);
    switch (event) {
      case 'lease':
        this.clock.now += LEASE_MS + 1;
        return;
      case 'window':
        this.clock.now += BANK_SETTLEMENT_WINDOW_MS + 1;
        return;
      case 'restart':
        return this.restart();
      case 'flushRedis':
        return this.flushRedis();
      case 'dedupCleanup':
        // The hourly job, long after the payment, with retention off (RETENTION_DAYS=0): the dedup table's
        // cleanup alone, once a job of its own that deleted settled rows after DEDUP_RETENTION_DAYS.
        return this.housekeeping({ retentionDays: 0 });
      case 'retention':
        // The hourly job once this order is older than RETENTION_DAYS.
        return this.housekeeping({ retentionDays: 30 });
    }
  }

  /**
   * The process dies: every actor in it, wherever it waits (a request that has not arrived yet, still at its
   * start, arrives at the next life). It starts again, and its start-up sweep runs.
   */
  private async restart(): Promise<void> {
    for (const holder of await this.holders()) this.deadHolders.add(holder);
    for (const name of this.scheduler.waitingActors()) {
      // A start-up sweep belongs to its process, even before it has begun.
      if (this.scheduler.waitingAt(name) !== 'start' || name.startsWith('boot')) this.scheduler.crash(name);
    }
    this.lives++;
    this.lifePrefix = `${instanceName()}.life${this.lives}x${this.orderNo}.`;
    const life = this.lifePrefix;
    const name = this.lives === 1 ? 'boot' : `boot${this.lives}`;
    this.ends.set(
      name,
      this.scheduler.spawn(name, (at) =>
        reconcileStalePayments({
          atStartup: true,
          life,
          now: this.now,
          at: at as RaceHook,
          orderNos: [this.orderNo],
          attemptIds: this.attemptIds,
        }),
      ),
    );
  }

  /** Redis loses every key of this order (a restart without persistence): its request keys and facts. */
  private async flushRedis(): Promise<void> {
    this.redisLost = true;
    const redis = getRedis();
    const keys = [...new Set(this.keyOf.values())];
    if (keys.length > 0) await redis.del(...keys);
    await redis.del(`order:facts:${this.orderNo}`);
  }

  private async housekeeping(horizons: { retentionDays: number }): Promise<void> {
    const before = await this.read();
    for (const charge of before.charges) this.chargesSeen.add(charge.id);
    // As of a day when this order is older than RETENTION_DAYS; only this order (other worlds run beside it).
    const later = new Date(Math.max(this.clock.now, Date.now()) + 40 * 86_400_000);
    await runHousekeeping(later, horizons, { orderNos: [this.orderNo] });
    const after = await this.read();
    if (before.order && !after.order) {
      this.pruned = true;
      const settled = settledProblems(before, 'when housekeeping pruned it');
      if (settled.length > 0) this.violations.push(`housekeeping pruned an order not settled: ${settled.join('; ')}`);
    }
  }

  /** Every holder of a claim on this order now: the order's, the dedup row's, the request keys'. */
  private async holders(): Promise<string[]> {
    const world = await this.read();
    const keys = await Promise.all([...new Set(this.keyOf.values())].map((name) => this.readKey(name)));
    return [world.order?.attemptId, world.row?.owner, ...keys.map((key) => key?.holder)].filter(
      (holder): holder is string => typeof holder === 'string',
    );
  }

  // ---- the takeover check: a takeover never takes a live claim ------------------------------------------

  private claimBefore: { actor: string; point: string; claim: ClaimSeen } | undefined;

  /** The payments whose command after a point is sent twice, until it is (resendAt). */
  private readonly resends = new Map<string, ResendPoint>();
  /** The armed command of the actor running now, disarmed once it reaches its next point. */
  private disarm: (() => void) | undefined;

  private async beforeStep(actor: string, point: string): Promise<void> {
    const key = this.keyOf.get(actor);
    if (this.resends.get(actor) === point && key) {
      this.resends.delete(actor);
      this.scheduler.trace.push(`${actor}⇉${point}`);
      this.disarm = sendTwice(key);
    }
    if (point === 'pay.bank') this.paidAtBankCall.set(actor, (await this.read()).order?.status === 'PAID');
    this.claimBefore =
      point === 'reconcile.takeOver' || point === 'key.takeOver'
        ? { actor, point, claim: await this.claimAt(actor, point) }
        : undefined;
  }

  private async afterStep(actor: string, point: string): Promise<void> {
    this.disarm?.();
    this.disarm = undefined;
    if (this.scheduler.hasEnded(actor)) await this.ended(actor);
    const before = this.claimBefore;
    this.claimBefore = undefined;
    if (!before?.claim || before.actor !== actor) return;
    const after = await this.claimAt(actor, point);
    const takenOver = after !== undefined && after.fence !== before.claim.fence;
    if (!takenOver) return;
    const { holder, claimedAt } = before.claim;
    const dead = holder === null || this.deadHolders.has(holder) || claimedAt + LEASE_MS <= this.clock.now;
    if (!dead) {
      this.violations.push(
        `${actor} took over a live claim at ${point} (held by ${holder}, renewed ${this.clock.now - claimedAt} ms ago)`,
      );
    }
  }

  /** Per actor, whether the order was PAID when it called the bank (its step from `pay.bank`). */
  private readonly paidAtBankCall = new Map<string, boolean>();

  /**
   * An actor just ended. Told DECLINED by a bank call it made when the order was already recorded PAID, in a
   * configuration that promises one charge: a decline over a charge (a stale attempt's, say). The order itself
   * ending DECLINED with a charge is `check`'s.
   */
  private async ended(actor: string): Promise<void> {
    const end = await this.ends.get(actor);
    if (end?.kind === 'threw' && injectedFailure(end.error)) {
      this.violations.push(...(await this.claimsLeftBy(actor)));
      return;
    }
    if (end?.kind !== 'returned') return;
    this.violations.push(...(await this.claimsLeftBy(actor)));
    const result = end.value as Partial<PayResult>;
    const outcome = result.kind === 'completed' || result.kind === 'duplicate' ? result.outcome : undefined;
    if (outcome?.status !== 'DECLINED' || !this.bounded()) return;
    if (result.kind === 'completed' && this.paidAtBankCall.get(actor)) {
      this.violations.push(`${actor} was told DECLINED by a bank call made when the order was PAID`);
    }
  }

  /**
   * A payment attempt has just answered: it holds no claim any more (the release rule's, release.ts: completed,
   * given back, or kept in doubt, which no attempt holds). A claim it still held would keep the order from the
   * next retry for a lease, for nobody (an attempt that lost its key while away once left the order so; one whose
   * key's store failed as it renewed it, too). An attempt whose store failed before the bank (a 503) has answered.
   */
  private async claimsLeftBy(actor: string): Promise<string[]> {
    const ids = this.idsOf.get(actor);
    if (!ids) return [];
    // Two holders in one statement, not the whole world (`read`): this runs as every attempt of every schedule ends.
    const [[claims], keys] = await Promise.all([
      getDb().$queryRaw<Array<{ order: string | null; row: string | null }>>`
        SELECT (SELECT attempt_id FROM orders WHERE order_no = ${this.orderNo} AND status IN ('PROCESSING', 'UNKNOWN'))
            AS "order",
          (SELECT owner FROM idempotent_record WHERE biz_type = 'PAYMENT' AND biz_no = ${this.orderNo}
            AND outcome IS NULL) AS "row"`,
      Promise.all([...new Set(this.keyOf.values())].map((name) => getRedis().get(name))),
    ]);
    return stillHolding(actor, [
      ids.has(claims?.order ?? '') && 'the order',
      ids.has(claims?.row ?? '') && 'the dedup row',
      keys.some((raw) => keyHeldBy(raw, ids)) && 'its request key',
    ]);
  }

  /** The claim a takeover at `point` acts on: the actor's request key, or the order's (its dedup row's). */
  private async claimAt(actor: string, point: string): Promise<ClaimSeen> {
    if (point === 'key.takeOver') {
      const name = this.keyOf.get(actor);
      return name ? this.readKey(name) : undefined;
    }
    const { order, row } = await this.read();
    if (order && (order.status === 'PROCESSING' || order.status === 'UNKNOWN')) {
      return { holder: order.attemptId, fence: order.fence, claimedAt: order.claimedAt?.getTime() ?? 0 };
    }
    if (row && row.outcome === null) return { holder: row.owner, fence: row.fence, claimedAt: row.claimedAt.getTime() };
    return undefined;
  }

  private async readKey(name: string): Promise<ClaimSeen> {
    const raw = await getRedis().get(name);
    const record = raw === null ? undefined : decodeRecord(raw);
    if (!record || record.state === 'done') return undefined;
    return { holder: record.owner, fence: record.fence, claimedAt: record.since };
  }

  // ---- the end of a schedule ----------------------------------------------------------------------------

  /** The order, its dedup row, the bank's statement and the outbox, as they are. */
  async read(): Promise<WorldState> {
    const db = getDb();
    const [order, row, charges, events, receipts] = await Promise.all([
      db.order.findUnique({
        where: { orderNo: this.orderNo },
        select: { status: true, chargeId: true, attemptId: true, fence: true, claimedAt: true },
      }),
      db.idempotentRecord.findUnique({
        where: { bizType_bizNo: { bizType: 'PAYMENT', bizNo: this.orderNo } },
        select: { owner: true, fence: true, claimedAt: true, outcome: true },
      }),
      db.bankCharge.findMany({
        where: { merchantRef: this.orderNo },
        select: { id: true, createdAt: true },
        orderBy: { createdAt: 'asc' },
      }),
      db.outboxEvent.findMany({ where: { key: this.orderNo }, select: { payload: true }, orderBy: { id: 'asc' } }),
      // The receipts this world's own consumer sent: lib/events/events.int.test.ts, running beside it, relays
      // every file's outbox rows and delivers them too, and with layer 4 off nothing keeps a second receipt
      // out (a race of the test files, not of the code: it did not replay).
      db.receipt.findMany({
        where: { orderNo: this.orderNo, consumer: this.receiptConsumer },
        select: { chargeId: true },
      }),
    ]);
    return {
      order,
      row,
      charges,
      events: events.map((event) => parseOutcome(event.payload)).flatMap((outcome) => (outcome ? [outcome] : [])),
      receipts: receipts.map((receipt) => receipt.chargeId),
    };
  }

  /** Time passes (every late charge lands, every lease runs out) and the sweep runs until nothing changes. */
  async settle(): Promise<void> {
    let last = '';
    for (let round = 0; round < 8; round++) {
      this.clock.now += BANK_SETTLEMENT_WINDOW_MS + 2 * LEASE_MS + 1;
      await reconcileStalePayments({ now: this.now, orderNos: [this.orderNo] });
      const state = JSON.stringify(await this.read());
      if (state === last) return;
      last = state;
    }
  }

  /** Whether the matrix declares this schedule's order safe from a second charge. */
  bounded(sameKey = this.sameKey): boolean {
    const { stateMachine, uniqueConstraint, bankKey, requestKey } = this.layers;
    return stateMachine || uniqueConstraint || bankKey || (requestKey && sameKey && !this.redisLost);
  }

  /** The invariants, at the end of a schedule (after `settle`). */
  async check(told: PayResult[], when: string, sameKey: boolean): Promise<string[]> {
    const state = await this.read();
    const found: string[] = [];
    const chargeIds = state.charges.map((charge) => charge.id);
    if (this.bounded(sameKey) && chargeIds.length > 1) found.push(`${when}: ${chargeIds.length} charges for one order`);
    if (this.pruned || !state.order) {
      if (chargeIds.length > 0) found.push(`${when}: charges left for an order that is gone`);
    } else {
      found.push(...settledProblems(state, when));
    }
    for (const id of this.chargesSeen) {
      if (!this.pruned && !chargeIds.includes(id)) found.push(`${when}: charge ${id} vanished`);
    }
    for (const result of told) {
      const outcome = result.kind === 'completed' || result.kind === 'duplicate' ? result.outcome : undefined;
      const known = chargeIds.includes(outcome?.status === 'PAID' ? outcome.chargeId : '') || this.pruned;
      if (outcome?.status === 'PAID' && !known) {
        found.push(`${when}: ${result.requestId} told PAID with ${outcome.chargeId}, which the bank never charged`);
      }
    }
    return found;
  }

  private delivered = 0;

  /** The consumer name this world delivers its receipts under. */
  private get receiptConsumer(): string {
    return `race-${this.orderNo}`;
  }

  /** Each payment.paid event not delivered yet goes to the receipt consumer, once. */
  async deliverReceipts(): Promise<void> {
    const { events } = await this.read();
    for (const outcome of events.slice(this.delivered)) {
      await sendReceipt({ key: this.orderNo, payload: JSON.stringify(outcome) }, this.receiptConsumer);
    }
    this.delivered = events.length;
  }
}

export type WorldState = {
  order: {
    status: string;
    chargeId: string | null;
    attemptId: string | null;
    fence: number;
    claimedAt: Date | null;
  } | null;
  row: { owner: string | null; fence: number; claimedAt: Date; outcome: unknown } | null;
  charges: Array<{ id: string; createdAt: Date }>;
  events: ReturnType<typeof parseOutcome>[];
  receipts: string[];
};

/** What keeps an order from being settled: a charge unrecorded, a claim left, more events than charges. */
export function settledProblems(state: WorldState, when: string): string[] {
  const found: string[] = [];
  const { order, row, charges } = state;
  if (!order) return [`${when}: the order is gone`];
  const chargeIds = charges.map((charge) => charge.id);
  const rowOutcome = row ? parseOutcome(row.outcome) : undefined;
  if (chargeIds.length > 0) {
    if (order.status !== 'PAID' || !order.chargeId || !chargeIds.includes(order.chargeId)) {
      found.push(`${when}: the bank charged, but the order is ${order.status} (${order.chargeId ?? 'no charge'})`);
    }
    if (rowOutcome?.status === 'PAID' && rowOutcome.chargeId !== order.chargeId) {
      found.push(`${when}: the order names ${order.chargeId}, its dedup row ${rowOutcome.chargeId}`);
    }
  } else if (order.status !== 'PENDING' && order.status !== 'DECLINED') {
    found.push(`${when}: no charge, and the order is ${order.status}`);
  }
  if (row && !rowOutcome) found.push(`${when}: a dedup row without an outcome is left`);
  for (const id of chargeIds) {
    const events = state.events.filter((event) => event?.status === 'PAID' && event.chargeId === id).length;
    if (events > 1) found.push(`${when}: ${events} payment.paid events for charge ${id}`);
    const receipts = state.receipts.filter((receipt) => receipt === id).length;
    if (receipts > 1) found.push(`${when}: ${receipts} receipts for charge ${id}`);
  }
  if (order.status === 'PAID' && order.chargeId) {
    const named = state.events.filter((event) => event?.status === 'PAID' && event.chargeId === order.chargeId);
    if (named.length === 0) found.push(`${when}: no payment.paid event for the order's charge ${order.chargeId}`);
  }
  return found;
}

/**
 * The policy source of a world whose payments are checked at their claim: its caller's every order runs under the
 * policy its order would be given when read (the lab's, for the settings the world created it with), as every
 * order runs under the default one with the lab off. The lab's source stays for everything else.
 */
const policiesOfCallers = new Map<string, PaymentPolicy>();
let labSource: PolicySource | undefined;
async function policyForEveryOrderOf(caller: CallerScope, orderNo: string): Promise<void> {
  if (!labSource) {
    const source = policySource();
    labSource = source;
    setPolicySource({
      forOrder: (order) => source.forOrder(order),
      leaseMs: () => source.leaseMs(),
      forCaller: async (asking) => policiesOfCallers.get(asking),
    });
  }
  const order = await getDb().order.findUniqueOrThrow({ where: { orderNo }, select: { owner: true, lab: true } });
  policiesOfCallers.set(caller, await labSource.forOrder({ orderNo, ...order }));
}
