// The race explorer for refunds, on the real code, real PostgreSQL and Redis: one paid order ($42.00), refund
// attempts of one or more identities (the same request id, or ids of their own), the refunds' reconciler and
// sweep as actors under a RaceScheduler, and what strikes between their steps (the clock past a lease or the
// settlement window, a restart, Redis losing its keys, retention pruning the order: it was paid 40 days ago).
// After the schedule time passes and the sweep settles; then the invariants refunds must keep are checked, and the
// first identity's caller retries once more.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { getDb } from '../../lib/db.ts';
import { RACE_POINTS, type RaceHook, type RacePoint } from '../../lib/defences/race-points.ts';
import { refundReference } from '../../lib/defences/refund.ts';
import { Prisma } from '../../lib/generated/prisma/client.ts';
import { bootPrefix, instanceName } from '../../lib/instance.ts';
import { ALL_LAYERS_OFF, ALL_LAYERS_ON, BANK_SETTLEMENT_WINDOW_MS, type Faults } from '../../lib/lab/settings.ts';
import { createOrder } from '../../lib/payments/orders.ts';
import { defaultPayOptions, pay } from '../../lib/payments/pay.ts';
import { pruneOldRecords } from '../../lib/payments/retention.ts';
import { getRedis } from '../../lib/redis.ts';
import { reconcileRefund, reconcileStaleRefunds } from '../../lib/refunds/reconcile.ts';
import { defaultRefundOptions, type RefundResult, refund } from '../../lib/refunds/refund.ts';
import { type CallerScope, clientScope } from '../../lib/session.ts';
import { KEY_UNRENEWED, LOST_KEY_WHILE_AWAY } from './regressions.ts';
import { type ActorEnd, RaceScheduler } from './scheduler.ts';
import {
  FAIL_POINTS,
  type FailPoint,
  injectedFailure,
  keyHeldBy,
  LATE_CHARGE_MS,
  LEASE_MS,
  notingIds,
  type ServerLayers,
  stillHolding,
} from './world.ts';

export const REFUND_INVARIANTS = [
  'never more refunded at the bank than charged, and the ledger within [0, the charge]',
  'at most one bank refund per refund identity wherever a layer promises it (3, 4 or 5; 2 alone while Redis keeps its keys)',
  'every bank refund ends recorded (its refund SUCCEEDED), no claim left; never FAILED over a bank refund',
  'with layer 3 or 4 on, the ledger is exactly what the bank refunded',
  'nobody is told SUCCEEDED with a refund the bank never made',
  'a takeover never takes a live claim',
  'an attempt that has answered (a 503 too, its store failing before the bank) holds no claim: each is completed, given back, or kept in doubt by nobody',
  'the last retry of the first refund is told its refund',
  'once retention pruned the order, the bank makes no refund of it',
];

const REFUND_BANK_FAULTS = ['none', 'lateCharge', 'timeoutAfterCharge', 'bankError'] as const;
type RefundBankFault = (typeof REFUND_BANK_FAULTS)[number];
const BANK: Record<RefundBankFault, Partial<Faults>> = {
  none: {},
  lateCharge: { bankLateChargeMs: LATE_CHARGE_MS },
  timeoutAfterCharge: { bankTimeoutAfterCharge: true },
  bankError: { bankFailure: 'error' },
};

const EVENTS = ['lease', 'window', 'restart', 'flushRedis', 'prune'] as const;
type RefundEvent = (typeof EVENTS)[number];

export type RefundSchedule = {
  layers: ServerLayers;
  /** The first attempt's amount and bank fault. */
  amountCents: number;
  first: RefundBankFault;
  /** Further attempts: of the first refund (its request id and amount), or of refunds of their own. */
  duplicates: number;
  /** Each further attempt's bank fault, in spawning order ('none' where the list ends: schedules kept from before it). */
  duplicateBanks?: RefundBankFault[];
  sameId: boolean;
  reconcilers: number;
  sweeps: number;
  crashes: Array<{ actor: number; point: RacePoint }>;
  /** Refund attempts whose store fails at a point, as world.ts's payments' (none in schedules kept from before). */
  failures?: Array<{ actor: number; point: FailPoint }>;
  events: RefundEvent[];
  choices: number[];
};

type Plan = { name: string; crashAt?: { point: string }; failAt?: { point: FailPoint } } & (
  | { kind: 'refund'; requestId: string; amountCents: number; bank?: RefundBankFault }
  | { kind: 'reconcile'; requestId: string }
  | { kind: 'sweep' }
);

type Row = { refundKey: string; status: string; amountCents: number; reserved: boolean; bankRefundId: string | null };

export class RefundWorld {
  readonly clock = { now: Date.now() };
  readonly scheduler: RaceScheduler;
  readonly violations: string[] = [];
  readonly ends = new Map<string, Promise<ActorEnd<unknown>>>();
  private readonly deadHolders = new Set<string>();
  redisLost = false;
  /** The bank's refunds of the order when retention pruned it (undefined: not pruned). */
  private prunedWith: Set<string> | undefined;
  private lives = 0;
  private lifePrefix = bootPrefix();
  private ids = 0;
  readonly attemptIds = () => `${this.lifePrefix}${++this.ids}`;
  readonly now = () => this.clock.now;
  /** Each refund actor's attempt ids (its lane's): whose claim a holder's id names. */
  private readonly idsOf = new Map<string, Set<string>>();

  private constructor(
    readonly orderNo: string,
    /** The world's own caller: its request keys are nobody else's (worlds run side by side). */
    readonly caller: CallerScope,
    readonly layers: ServerLayers,
    readonly sameId: boolean,
  ) {
    this.scheduler = new RaceScheduler({
      before: (actor, point) => this.beforeStep(actor, point),
      after: (actor, point) => this.afterStep(actor, point),
    });
  }

  /** A paid order of $42.00, its refunds then run under `layers` with a short lease. */
  static async create(layers: ServerLayers, sameId: boolean): Promise<RefundWorld> {
    const caller = clientScope(`race-refunds-${randomBytes(6).toString('hex')}`);
    const { orderNo } = await createOrder({ lab: { layers: ALL_LAYERS_ON } }, caller);
    const paid = await pay({ orderNo, caller, channel: 'api', idempotencyKey: `pay-${orderNo}` }, defaultPayOptions());
    if (paid.kind !== 'completed') throw new Error(`the order was not paid: ${paid.kind}`);
    const lab = { layers: { ...ALL_LAYERS_OFF, ...layers }, claims: { leaseMs: LEASE_MS } };
    await getDb().order.update({ where: { orderNo }, data: { lab } });
    // Paid long ago, as retention's due orders are: a refund's write on the order makes it recent again.
    await getDb().$executeRaw`
      UPDATE orders SET created_at = now() - interval '40 days', updated_at = now() - interval '40 days'
      WHERE order_no = ${orderNo}`;
    return new RefundWorld(orderNo, caller, layers, sameId);
  }

  refund(requestId: string, amountCents: number, at?: RaceHook, bank: RefundBankFault = 'none', laneId?: string) {
    return refund(
      { orderNo: this.orderNo, amountCents, caller: this.caller, channel: 'api', requestId, laneId },
      {
        ...defaultRefundOptions(),
        now: this.now,
        at,
        bankFaults: BANK[bank],
        attemptIds: notingIds(this.attemptIds, this.idsOf, laneId),
      },
    );
  }

  spawn(plan: Plan): void {
    const body = (at: (point: string) => Promise<void>): Promise<unknown> => {
      const hook = at as RaceHook;
      switch (plan.kind) {
        case 'refund':
          return this.refund(plan.requestId, plan.amountCents, hook, plan.bank, plan.name);
        case 'reconcile':
          return reconcileRefund(
            { orderNo: this.orderNo, refundKey: plan.requestId },
            { leaseMs: LEASE_MS, now: this.now, at: hook, attemptIds: this.attemptIds },
          );
        case 'sweep':
          return reconcileStaleRefunds({
            now: this.now,
            at: hook,
            orderNos: [this.orderNo],
            attemptIds: this.attemptIds,
          });
      }
    };
    this.ends.set(plan.name, this.scheduler.spawn(plan.name, body, plan.crashAt, plan.failAt));
  }

  async strike(event: RefundEvent): Promise<void> {
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
      case 'flushRedis': {
        this.redisLost = true;
        const keys = await getRedis().keys(`idem:{${this.caller}:*`);
        if (keys.length > 0) await getRedis().del(...keys);
        return;
      }
      case 'prune': {
        // Retention's own statement, by its own rules (the order due unless a refund touched it or is in doubt), the
        // bank's books apart (BANK_DATABASE_URL): its charge and refunds stay, as a processor's would.
        const before = (await this.bankRefunds()).map((r) => r.id);
        const pruned = await pruneOldRecords(new Date(Date.now() - 30 * 86_400_000), {
          orderNos: [this.orderNo],
          bankApart: true,
        });
        if (Number(pruned.orders) > 0) this.prunedWith ??= new Set(before);
        return;
      }
    }
  }

  private bankRefunds() {
    return getDb().$queryRaw<Array<{ id: string; merchantRef: string; amountCents: number }>>`
      SELECT r.id, r.merchant_ref AS "merchantRef", r.amount_cents AS "amountCents"
      FROM bank_refunds r JOIN bank_charges c ON c.id = r.charge_id WHERE c.merchant_ref = ${this.orderNo}`;
  }

  /** Whether retention pruned the order (what is left of its records is then nobody's to check). */
  get pruned(): boolean {
    return this.prunedWith !== undefined;
  }

  /** The process dies with every actor in it; it starts again, and its start-up sweep runs. */
  private async restart(): Promise<void> {
    for (const row of await this.claims()) if (row.holder) this.deadHolders.add(row.holder);
    for (const name of this.scheduler.waitingActors()) {
      if (this.scheduler.waitingAt(name) !== 'start' || name.startsWith('boot')) this.scheduler.crash(name);
    }
    this.lives++;
    this.lifePrefix = `${instanceName()}.life${this.lives}x${this.orderNo}.`;
    const life = this.lifePrefix;
    const name = `boot${this.lives}`;
    this.ends.set(
      name,
      this.scheduler.spawn(name, (at) =>
        reconcileStaleRefunds({
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

  // ---- a takeover never takes a live claim ----

  private claimBefore: { actor: string; claims: Map<string, Claim> } | undefined;

  private async beforeStep(actor: string, point: string): Promise<void> {
    this.claimBefore =
      point === 'reconcile.takeOver' || point === 'key.takeOver'
        ? { actor, claims: new Map((await this.claims()).map((claim) => [claim.id, claim])) }
        : undefined;
  }

  private async afterStep(actor: string, _point: string): Promise<void> {
    if (this.scheduler.hasEnded(actor)) this.violations.push(...(await this.claimsLeftBy(actor)));
    const before = this.claimBefore;
    this.claimBefore = undefined;
    if (!before || before.actor !== actor) return;
    for (const after of await this.claims()) {
      const seen = before.claims.get(after.id);
      if (!seen || seen.fence === after.fence) continue;
      const dead = seen.holder === null || this.deadHolders.has(seen.holder) || seen.claimedAt + LEASE_MS <= this.now();
      if (!dead) this.violations.push(`${actor} took over the live claim ${after.id} (held by ${seen.holder})`);
    }
  }

  /**
   * A refund attempt has just answered (as world.ts checks a payment's; a 503 too, its store failing before the
   * bank): it holds no claim any more, neither its refund, nor the refund's dedup row, nor its request key.
   */
  private async claimsLeftBy(actor: string): Promise<string[]> {
    const ids = this.idsOf.get(actor);
    const end = await this.ends.get(actor);
    const answered = end?.kind === 'returned' || (end?.kind === 'threw' && injectedFailure(end.error));
    if (!ids || !answered) return [];
    const db = getDb();
    const [refunds, rows, keys] = await Promise.all([
      db.refund.findMany({
        where: { orderNo: this.orderNo, status: { in: ['PROCESSING', 'UNKNOWN'] } },
        select: { attemptId: true },
      }),
      db.idempotentRecord.findMany({
        where: { bizType: 'REFUND', bizNo: { startsWith: `${this.orderNo}/` }, outcome: { equals: Prisma.DbNull } },
        select: { owner: true },
      }),
      getRedis().keys(`idem:{${this.caller}:*`),
    ]);
    const records = await Promise.all(keys.map((name) => getRedis().get(name)));
    return stillHolding(actor, [
      refunds.some((r) => ids.has(r.attemptId ?? '')) && 'a refund',
      rows.some((r) => ids.has(r.owner ?? '')) && 'a dedup row',
      records.some((raw) => keyHeldBy(raw, ids)) && 'a request key',
    ]);
  }

  /** Every claim on this order's refunds now: the refunds' (layer 3), their dedup rows' (layer 4). */
  private async claims(): Promise<Claim[]> {
    const db = getDb();
    const [refunds, rows] = await Promise.all([
      db.refund.findMany({
        where: { orderNo: this.orderNo, status: { in: ['PROCESSING', 'UNKNOWN'] } },
        select: { refundKey: true, attemptId: true, fence: true, claimedAt: true },
      }),
      db.idempotentRecord.findMany({
        where: { bizType: 'REFUND', bizNo: { startsWith: `${this.orderNo}/` }, outcome: { equals: Prisma.DbNull } },
        select: { bizNo: true, owner: true, fence: true, claimedAt: true },
      }),
    ]);
    return [
      ...refunds.map((r) => ({
        id: `refund ${r.refundKey}`,
        holder: r.attemptId,
        fence: r.fence,
        claimedAt: r.claimedAt?.getTime() ?? 0,
      })),
      ...rows.map((r) => ({ id: `row ${r.bizNo}`, holder: r.owner, fence: r.fence, claimedAt: r.claimedAt.getTime() })),
    ];
  }

  // ---- the end of a schedule ----

  async read() {
    const db = getDb();
    const [order, rows, bank, dedup] = await Promise.all([
      db.order.findUniqueOrThrow({
        where: { orderNo: this.orderNo },
        select: { amountCents: true, refundedCents: true },
      }),
      db.refund.findMany({
        where: { orderNo: this.orderNo },
        select: { refundKey: true, status: true, amountCents: true, reserved: true, bankRefundId: true },
      }),
      this.bankRefunds(),
      db.idempotentRecord.findMany({
        where: { bizType: 'REFUND', bizNo: { startsWith: `${this.orderNo}/` } },
        select: { bizNo: true, outcome: true },
      }),
    ]);
    return { order, rows: rows as Row[], bank, dedup };
  }

  /** Time passes (every late refund lands, every lease runs out) and the sweep runs until nothing changes. */
  async settle(): Promise<void> {
    let last = '';
    for (let round = 0; round < 8; round++) {
      this.clock.now += BANK_SETTLEMENT_WINDOW_MS + 2 * LEASE_MS + 1;
      await reconcileStaleRefunds({ now: this.now, orderNos: [this.orderNo], landedSince: 0, settledBy: this.now() });
      const state = JSON.stringify(this.pruned ? await this.bankRefunds() : await this.read());
      if (state === last) return;
      last = state;
    }
  }

  /** Whether a layer promises one bank refund per identity for this schedule. */
  bounded(): boolean {
    const { stateMachine, uniqueConstraint, bankKey, requestKey } = this.layers;
    return stateMachine || uniqueConstraint || bankKey || (requestKey && !this.redisLost);
  }

  async check(told: RefundResult[], when: string): Promise<string[]> {
    if (this.prunedWith) {
      // Its records went with it, as retention means them to; a refund the bank made since is counted nowhere.
      const before = this.prunedWith;
      const since = (await this.bankRefunds()).filter((r) => !before.has(r.id));
      return since.map((r) => `${when}: the bank refunded ${r.merchantRef} (${r.id}) after retention pruned the order`);
    }
    const { order, rows, bank, dedup } = await this.read();
    const found: string[] = [];
    const refunded = bank.reduce((sum, r) => sum + r.amountCents, 0);
    if (refunded > order.amountCents) found.push(`${when}: ${refunded} refunded of a ${order.amountCents} charge`);
    if (order.refundedCents < 0 || order.refundedCents > order.amountCents) {
      found.push(`${when}: the ledger is ${order.refundedCents}`);
    }
    const database = this.layers.stateMachine || this.layers.uniqueConstraint;
    if (database && order.refundedCents !== refunded) {
      found.push(`${when}: the ledger says ${order.refundedCents}, the bank refunded ${refunded}`);
    }
    for (const row of rows) {
      const reference = refundReference(this.orderNo, row.refundKey);
      const made = bank.filter((r) => r.merchantRef === reference);
      if (this.bounded() && made.length > 1) found.push(`${when}: ${made.length} bank refunds for ${row.refundKey}`);
      if (made.length > 0 && (row.status !== 'SUCCEEDED' || !made.some((r) => r.id === row.bankRefundId))) {
        found.push(`${when}: the bank refunded ${row.refundKey}, but it is ${row.status} (${row.bankRefundId})`);
      }
      if (made.length === 0 && row.status === 'SUCCEEDED') found.push(`${when}: ${row.refundKey} SUCCEEDED, no refund`);
      if (row.status === 'PROCESSING' || row.status === 'UNKNOWN')
        found.push(`${when}: ${row.refundKey} left ${row.status}`);
    }
    for (const row of dedup) if (row.outcome === null) found.push(`${when}: a dedup row without an outcome is left`);
    for (const result of told) {
      const outcome = 'outcome' in result ? result.outcome : undefined;
      if (outcome?.status === 'SUCCEEDED' && !bank.some((r) => r.id === outcome.refundId)) {
        found.push(`${when}: ${result.laneId} told SUCCEEDED with ${outcome.refundId}, which the bank never made`);
      }
    }
    return found;
  }
}

type Claim = { id: string; holder: string | null; fence: number; claimedAt: number };

/** Runs one random schedule of refunds; its findings (none: undefined). */
export async function runRefundSchedule(schedule: RefundSchedule): Promise<string[] | undefined> {
  const world = await RefundWorld.create(schedule.layers, schedule.sameId);
  const plans: Plan[] = [
    { name: 'first', kind: 'refund', requestId: 'rq0', amountCents: schedule.amountCents, bank: schedule.first },
  ];
  for (let i = 1; i <= schedule.duplicates; i++) {
    const requestId = schedule.sameId ? 'rq0' : `rq${i}`;
    const bank = schedule.duplicateBanks?.[i - 1] ?? 'none';
    plans.push({ name: `dup${i}`, kind: 'refund', requestId, amountCents: schedule.amountCents, bank });
  }
  for (let i = 1; i <= schedule.reconcilers; i++) plans.push({ name: `rec${i}`, kind: 'reconcile', requestId: 'rq0' });
  for (let i = 1; i <= schedule.sweeps; i++) plans.push({ name: `sweep${i}`, kind: 'sweep' });
  for (const { actor, point } of schedule.crashes) {
    const plan = plans[actor % plans.length];
    if (plan && !plan.crashAt) plan.crashAt = { point };
  }
  for (const { actor, point } of schedule.failures ?? []) {
    const plan = plans[actor % (schedule.duplicates + 1)];
    if (plan && !plan.failAt) plan.failAt = { point };
  }
  for (const plan of plans) world.spawn(plan);
  if (schedule.events.length > 0) {
    world.scheduler.spawn('events', async (at) => {
      for (const event of schedule.events) {
        await at('event');
        await world.strike(event);
      }
    });
  }
  try {
    await world.scheduler.runChoices(schedule.choices);
  } catch (error) {
    return [`stuck: ${(error as Error).message}`, ...world.scheduler.trace];
  }
  return finishRefunds(world, schedule.amountCents);
}

async function finishRefunds(world: RefundWorld, amountCents: number): Promise<string[] | undefined> {
  const violations = [...world.violations];
  const told: RefundResult[] = [];
  for (const [name, ended] of world.ends) {
    const end = await ended;
    // A store failure the schedule meant is a 503, checked as an answer (claimsLeftBy); any other throw is a finding.
    if (end.kind === 'threw' && !injectedFailure(end.error))
      violations.push(`${name} threw: ${(end.error as Error).message}`);
    else if (end.kind === 'returned' && isRefundResult(end.value)) told.push(end.value);
  }
  await world.settle();
  violations.push(...(await world.check(told, 'after reconciliation')));
  // The first refund's caller retries once more, with its request id.
  const last = await world.refund('rq0', amountCents, undefined, 'none', 'last');
  await world.settle();
  violations.push(...(await world.check([...told, last], 'after a last retry')));
  const settled = world.pruned ? undefined : (await world.read()).rows.find((row) => row.refundKey === 'rq0');
  if (settled?.status === 'SUCCEEDED' && world.bounded()) {
    const outcome = 'outcome' in last ? last.outcome : undefined;
    if (outcome?.status !== 'SUCCEEDED' || outcome.refundId !== settled.bankRefundId) {
      violations.push(`the last retry was told ${last.kind}, not the refund ${settled.bankRefundId}`);
    }
  }
  return violations.length > 0 ? [...violations, ...world.scheduler.trace] : undefined;
}

/** A scripted schedule of refunds: who runs to which point, who dies, what strikes (then everyone to the end). */
export type RefundScript = {
  name: string;
  layers: ServerLayers;
  amountCents: number;
  actors: Plan[];
  steps: Array<{ run: string; to?: RacePoint } | { crash: string } | { fail: string } | { strike: RefundEvent }>;
};

export async function runRefundScript(script: RefundScript): Promise<string[] | undefined> {
  const world = await RefundWorld.create(script.layers, true);
  for (const plan of script.actors) world.spawn(plan);
  try {
    for (const step of script.steps) {
      if ('run' in step) await world.scheduler.runUntil(step.run, step.to);
      else if ('crash' in step) world.scheduler.crash(step.crash);
      else if ('fail' in step) world.scheduler.fail(step.fail);
      else await world.strike(step.strike);
    }
    await world.scheduler.drain();
  } catch (error) {
    return [`script: ${(error as Error).message}`, ...world.scheduler.trace];
  }
  return finishRefunds(world, script.amountCents);
}

const only = (...on: Array<keyof ServerLayers>): ServerLayers => ({
  requestKey: false,
  stateMachine: false,
  uniqueConstraint: false,
  bankKey: false,
  ...Object.fromEntries(on.map((layer) => [layer, true])),
});

/**
 * Schedules a refund's defences must hold, run in every `npm test` (random schedules find them rarely): each is the
 * shape of a bug the explorer must catch, not one that was found.
 */
export const REFUND_SCRIPTS: RefundScript[] = [
  ...(['stateMachine', 'uniqueConstraint'] as const).map(
    (layer): RefundScript => ({
      // An attempt waits at the bank's door past its lease; a retry takes its claim over, asks the bank (whose
      // fence for the refund rises) and refunds. The first then calls the bank under its old token: refused. Two
      // refunds of $5 fit in the charge, so only the fence keeps the second out.
      name: `a stale attempt at the bank after a takeover (${layer} alone): the fence keeps it out`,
      layers: only(layer),
      amountCents: 500,
      actors: [
        { name: 'first', kind: 'refund', requestId: 'rq0', amountCents: 500 },
        { name: 'dup1', kind: 'refund', requestId: 'rq0', amountCents: 500 },
      ],
      steps: [{ run: 'first', to: 'pay.bank' }, { strike: 'lease' }, { run: 'dup1' }, { run: 'first' }],
    }),
  ),
  {
    // An attempt dies between its claim and the bank: its amount is on the ledger. After the lease the sweep
    // gives the claim back, and the amount comes off; a second refund of most of the charge then fits.
    name: 'a claim whose attempt died before the bank: given back, its amount off the ledger',
    layers: only('stateMachine', 'uniqueConstraint'),
    amountCents: 3_000,
    actors: [
      { name: 'first', kind: 'refund', requestId: 'rq0', amountCents: 3_000, crashAt: { point: 'pay.bank' } },
      { name: 'sweep1', kind: 'sweep' },
    ],
    steps: [{ run: 'first' }, { strike: 'lease' }, { strike: 'lease' }, { run: 'sweep1' }],
  },
  ...(
    [
      ['requestKey', 'stateMachine', 'uniqueConstraint'],
      ['requestKey', 'uniqueConstraint'],
      ['requestKey', 'bankKey'],
    ] as const
  ).map(
    (on): RefundScript => ({
      // Retention prunes the order after the attempt read it, as layer 2 claims the refund's key: the refund's row,
      // written next, outlives the order (as a row written after retention's snapshot does). The claim (or, with no
      // claim, the attempt's own write on the ledger) then meets no order: what the ledger did not count must not
      // go to the bank, which still has the charge. Layer 2 is on for its race point, the only one between the
      // attempt's read of the order and the refund's row.
      name: `an order pruned before its refund's row was written (${on.join(' + ')}): no refund at the bank`,
      layers: only(...on),
      amountCents: 500,
      actors: [{ name: 'first', kind: 'refund', requestId: 'rq0', amountCents: 500 }],
      steps: [{ run: 'first', to: 'key.claim' }, { strike: 'prune' }, { run: 'first' }],
    }),
  ),
  {
    // The first attempt claims its key, and its refund a lease later; its retry finds the key dead and the refund
    // live, takes the key over and is told "in progress"; the first wakes a lease after that, renews its refund's
    // claim, finds its key taken over and stops before the bank. Before 2026-12-07 it answered still holding the
    // refund, its amount on the ledger, for another lease (regressions.ts has the payment's).
    name: 'an attempt that lost its key while away (layers 2+3+4): its refund given back, its amount off the ledger',
    layers: only('requestKey', 'stateMachine', 'uniqueConstraint'),
    amountCents: 500,
    actors: [
      { name: 'first', kind: 'refund', requestId: 'rq0', amountCents: 500 },
      { name: 'dup1', kind: 'refund', requestId: 'rq0', amountCents: 500 },
    ],
    steps: LOST_KEY_WHILE_AWAY,
  },
  {
    // Away for a lease, the first attempt renews its refund's claim, then its key's store fails as it renews the key
    // (Redis unreachable). Before 2026-12-07 that throw went through every guard as a crash does: the refund was left
    // held, its amount on the ledger, for a lease (regressions.ts has the payment's).
    name: 'an attempt whose key’s store fails as it renews it (layers 2+3+4): its refund given back, then a 503',
    layers: only('requestKey', 'stateMachine', 'uniqueConstraint'),
    amountCents: 500,
    actors: [{ name: 'first', kind: 'refund', requestId: 'rq0', amountCents: 500 }],
    steps: KEY_UNRENEWED,
  },
];

function isRefundResult(value: unknown): value is RefundResult {
  return typeof value === 'object' && value !== null && 'laneId' in value && 'kind' in value;
}

const layersArbitrary = fc.record({
  requestKey: fc.boolean(),
  stateMachine: fc.boolean(),
  uniqueConstraint: fc.boolean(),
  bankKey: fc.boolean(),
});

export const refundScheduleArbitrary: fc.Arbitrary<RefundSchedule> = fc.record({
  layers: layersArbitrary,
  // Most of the charge, or a small part of it: other refunds then fit, or the ledger refuses them.
  amountCents: fc.constantFrom(500, 3_000),
  first: fc.constantFrom(...REFUND_BANK_FAULTS),
  duplicates: fc.integer({ min: 1, max: 3 }),
  // Most further attempts' calls (five in eight) go to a bank that behaves, so that the first's faults still meet them.
  duplicateBanks: fc.array(fc.oneof(fc.constant<RefundBankFault>('none'), fc.constantFrom(...REFUND_BANK_FAULTS)), {
    minLength: 3,
    maxLength: 3,
  }),
  sameId: fc.boolean(),
  reconcilers: fc.integer({ min: 0, max: 2 }),
  sweeps: fc.integer({ min: 0, max: 1 }),
  crashes: fc.array(fc.record({ actor: fc.nat({ max: 6 }), point: fc.constantFrom(...RACE_POINTS) }), { maxLength: 2 }),
  failures: fc.array(fc.record({ actor: fc.nat({ max: 3 }), point: fc.constantFrom(...FAIL_POINTS) }), {
    maxLength: 1,
  }),
  events: fc.array(fc.constantFrom<RefundEvent>(...EVENTS), { maxLength: 3 }),
  choices: fc.array(fc.nat({ max: 7 }), { minLength: 1, maxLength: 64 }),
});

/** Runs `count` random schedules of refunds, `lanes` at a time; the first findings of each lane (shrunk). */
export async function exploreRefunds(options: { count: number; seed: number; lanes?: number }) {
  const lanes = options.lanes ?? 6;
  const started = performance.now();
  let schedules = 0;
  const failures: Array<{ seed: number; schedule: RefundSchedule; violations: string[] }> = [];
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      const seed = options.seed + lane;
      // Every failing schedule's violations, as first seen: a counterexample that does not fail again when it is
      // replayed is reported with them (as the payments' explorer does: explorer.ts).
      const seen = new Map<string, string[]>();
      const result = await fc.check(
        fc.asyncProperty(refundScheduleArbitrary, async (schedule) => {
          schedules++;
          const violations = await runRefundSchedule(schedule);
          if (violations) seen.set(JSON.stringify(schedule), violations);
          return violations === undefined;
        }),
        { numRuns: Math.ceil(options.count / lanes), seed, endOnFailure: false, maxSkipsPerRun: 0 },
      );
      if (result.failed && result.counterexample) {
        const [schedule] = result.counterexample;
        const violations = (await runRefundSchedule(schedule)) ?? [
          ...(seen.get(JSON.stringify(schedule)) ?? []),
          'the schedule did not fail again when replayed',
        ];
        failures.push({ seed, schedule, violations });
      }
    }),
  );
  return { schedules, seconds: (performance.now() - started) / 1000, failures };
}
