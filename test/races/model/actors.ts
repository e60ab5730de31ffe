// The protocol model's actors: a payment attempt (lib/payments/pay.ts and the defences of lib/defences), the
// reconciler (lib/payments/reconcile.ts reconcileOrder) and the sweep (reconcileStalePayments), each a generator
// that mirrors the real control flow and yields at exactly the real code's race points, one operation of
// world.ts per point. The checker runs one actor's step (the operation at its point, then its code up to its
// next point) at a time, as the race explorer's scheduler does with the real code, so a model trace is a real
// schedule and the two can be held to each other step by step.
import {
  type AfterBank,
  askBank,
  type BankFault,
  type Claim,
  chargeCard,
  claimKey,
  claimOfView,
  claimOrder,
  claimOrderWithRow,
  completeKey,
  completeStaleRow,
  type DbClaimed,
  type DbLayers,
  type Fence,
  insertRow,
  isLive,
  judgeBankAnswer,
  keepDbUnknown,
  LEASE_MS,
  leaveDbInDoubt,
  type Outcome,
  readClaim,
  recordOutcome,
  recordReported,
  releaseDb,
  releaseKey,
  releaseTakenDb,
  renewDb,
  renewKey,
  resumeTakenDb,
  settleDb,
  settlementReport,
  takeOverDb,
  takeOverKey,
  type View,
  type World,
} from './world.ts';

export type Layers = { requestKey: boolean; stateMachine: boolean; uniqueConstraint: boolean; bankKey: boolean };

/** One operation at a named point: applied to the world when the actor's turn comes. */
export type Op = { point: string; apply: (w: World) => unknown };
/** What an actor is resumed with: its operation's result, and the clock at that moment. */
export type Resumed = { result: unknown; now: number };
export type Actor<T> = Generator<Op, T, Resumed>;

type AnsweredBy = 'requestKey' | 'stateMachine' | 'uniqueConstraint' | 'bankKey' | 'bank' | 'reconciler';
export type Answer =
  | { kind: 'completed'; outcome: Outcome }
  | { kind: 'duplicate'; outcome: Outcome; by: AnsweredBy; existing: boolean }
  | { kind: 'in_progress'; by: AnsweredBy }
  | { kind: 'failed_retryable' }
  | { kind: 'order_not_found' };

/** What an actor knows of itself: its name, its clock, its ids. */
export type Context = {
  name: string;
  layers: Layers;
  /** The clock when the actor was last resumed (its code between two points runs at that time). */
  now(): number;
  /** A new attempt id of the actor's process life. */
  newId(): string;
};

const noop = () => undefined;
function* op<T>(point: string, apply: (w: World) => T): Actor<T> {
  const { result } = yield { point, apply };
  return result as T;
}

/** A step with no operation: a value, at once (a defence that holds nothing in the world, say). */
// biome-ignore lint/correctness/useYield: an actor that returns at once is what this is for.
function* just<T>(value: T): Actor<T> {
  return value;
}

// ---- the recovery path -----------------------------------------------------------------------------------

export type Reconciled =
  | { kind: 'settled'; outcome: Outcome; found: boolean }
  | { kind: 'released' }
  | { kind: 'resumed'; fence: number }
  | { kind: 'running' }
  | { kind: 'waiting' }
  | { kind: 'idle' };

export type ReconcileOptions = {
  payer?: { id: string; bankKey: boolean };
  patience?: number;
  dead?: (holder: string) => boolean;
};

/** askBankAfterTakeover: the question under the taker's token, then the point before what it allows. */
function* askAfterTakeover(
  c: Context,
  fence: Fence,
  byLock: boolean,
  seen: Claim,
): Actor<{ verdict: AfterBank; askedAt: number }> {
  const answer = yield* op('reconcile.bank', (w) => askBank(w, { fence, byLock }));
  const askedAt = c.now();
  return { verdict: judgeBankAnswer(answer, seen, askedAt), askedAt };
}

/** reconcileOrder */
export function* reconcile(c: Context, options: ReconcileOptions = {}): Actor<Reconciled> {
  const view = yield* op('reconcile.read', (w) => readClaim(w));
  if (view.recorded) {
    const recorded = view.recorded;
    if (view.row) yield* op('reconcile.completeRow', (w) => completeStaleRow(w, view, recorded));
    return { kind: 'settled', outcome: recorded, found: false };
  }
  const claim = claimOfView(view);
  if (!claim) return { kind: 'idle' };
  if (isLive(claim, c.now(), LEASE_MS * (options.patience ?? 1), options.dead)) return { kind: 'running' };
  const taker = options.payer?.id ?? c.newId();
  const taken = yield* op('reconcile.takeOver', (w) => {
    const fence = takeOverDb(w, view, taker);
    return fence === null ? { fence, again: readClaim(w) } : { fence };
  });
  if (taken.fence === null) {
    const again = (taken as { again: View }).again;
    return again.recorded ? { kind: 'settled', outcome: again.recorded, found: false } : { kind: 'running' };
  }
  const fence = taken.fence;
  const { verdict, askedAt } = yield* askAfterTakeover(c, { lock: 'order', token: fence }, false, claim);
  const { payer } = options;
  if (verdict.kind === 'charged') {
    const outcome = { status: 'PAID' as const, chargeId: verdict.chargeId };
    const settled = yield* op('reconcile.write', (w) => settleDb(w, taker, fence, outcome));
    return settled ? { kind: 'settled', outcome, found: true } : { kind: 'running' };
  }
  if (verdict.kind === 'nothing' || (verdict.kind === 'wait' && payer?.bankKey)) {
    if (payer) {
      const resumed = yield* op('reconcile.write', (w) => resumeTakenDb(w, taker, fence));
      return resumed ? { kind: 'resumed', fence } : { kind: 'running' };
    }
    const released = yield* op('reconcile.write', (w) => releaseTakenDb(w, taker, fence));
    return released ? { kind: 'released' } : { kind: 'running' };
  }
  yield* op('reconcile.write', (w) => leaveDbInDoubt(w, taker, fence, claim.unknownSince ?? askedAt));
  return { kind: 'waiting' };
}

/** reconcileStalePayments, for the one order: the dead claim, then the settlement report. */
export function* sweep(c: Context, startup?: { dead: (holder: string) => boolean }): Actor<number> {
  const patience = 2;
  const candidate = yield* op('sweep.scan', (w) => {
    const stale = (holder: string | null, claimedAt: number | null) =>
      holder === null || (claimedAt ?? 0) < w.now - LEASE_MS * patience || (startup !== undefined && holder !== null);
    const { order, row } = w;
    const orderCandidate =
      (order.status === 'PROCESSING' || order.status === 'UNKNOWN') && stale(order.holder, order.claimedAt);
    const rowCandidate = row !== null && row.outcome === null && stale(row.owner, row.claimedAt);
    return orderCandidate || rowCandidate;
  });
  if (candidate) yield* reconcile(c, { patience, dead: startup?.dead });
  const report = yield* op('sweep.report', (w) => ({
    charges: settlementReport(w),
    pending: w.order.status === 'PENDING' || w.order.status === 'DECLINED',
  }));
  const [first] = report.charges;
  if (!report.pending || first === undefined) return candidate ? 1 : 0;
  const recorded = yield* op('sweep.record', (w) => recordReported(w, first));
  return (candidate ? 1 : 0) + (recorded ? 1 : 0);
}

// ---- a payment attempt -----------------------------------------------------------------------------------

type Hold = {
  fence?: { fence: Fence; byLock: boolean; layer: AnsweredBy };
  tookOver: boolean;
  renew(at: number): Actor<Answer | undefined>;
  stopped(answer: Answer): Actor<Answer>;
  settle(verdict: Verdict): Actor<void>;
};
type Verdict =
  | { kind: 'settled'; outcome: Outcome; existing: boolean }
  | { kind: 'nothingMoved' }
  | { kind: 'unknown'; since: number };
type Claimed = { kind: 'stopped'; answer: Answer } | { kind: 'held'; hold: Hold } | { kind: 'passed'; toBank?: string };

const stop = (answer: Answer): Claimed => ({ kind: 'stopped', answer });

export type PayPlan = { key: string; bank: BankFault };

/** pay(): the defences in order, the bank once, every claim told the verdict. */
export function* pay(c: Context, plan: PayPlan): Actor<Answer> {
  yield* op('start', noop);
  const id = c.newId();
  const { layers } = c;
  const databaseDecides = layers.stateMachine || layers.uniqueConstraint;
  const defences: Array<() => Actor<Claimed>> = [];
  if (layers.requestKey) defences.push(() => requestKeyClaim(c, id, plan.key, databaseDecides));
  defences.push(() =>
    databaseDecides ? databaseClaim(c, id, layers) : just<Claimed>({ kind: 'held', hold: unguarded() }),
  );
  if (layers.bankKey) defences.push(() => just<Claimed>({ kind: 'passed', toBank: 'pay:order' }));

  // 1-5: the defences.
  const holds: Hold[] = [];
  let toBank: string | undefined;
  for (const defence of defences) {
    const claimed = yield* defence();
    if (claimed.kind === 'stopped') return yield* unwind(holds, claimed.answer);
    if (claimed.kind === 'held') holds.push(claimed.hold);
    else toBank = claimed.toBank ?? toBank;
  }
  // Between the claims and the bank: a pause renews them.
  const claimedAt = c.now();
  yield* op('pay.beforeBank', noop);
  if (c.now() - claimedAt > LEASE_MS / 2) {
    const renewedAt = c.now();
    for (const hold of [...holds].reverse()) {
      const lost = yield* hold.renew(renewedAt);
      if (lost) return yield* unwind(holds, lost);
    }
  }
  // 5 + 6: the bank, once.
  const fence = holds.findLast((hold) => hold.fence)?.fence;
  const charged = yield* op('pay.bank', (w) =>
    chargeCard(w, { key: toBank ?? null, fence: fence?.fence ?? null }, plan.bank),
  );
  let verdict: Verdict;
  let answer: Answer;
  switch (charged.kind) {
    case 'charged': {
      const outcome: Outcome = { status: 'PAID', chargeId: charged.chargeId };
      if (charged.replayed && toBank) {
        verdict = { kind: 'settled', outcome, existing: true };
        answer = { kind: 'duplicate', outcome, by: 'bankKey', existing: true };
      } else {
        verdict = { kind: 'settled', outcome, existing: false };
        answer = { kind: 'completed', outcome };
      }
      break;
    }
    case 'declined':
      verdict = { kind: 'settled', outcome: { status: 'DECLINED' }, existing: false };
      answer = { kind: 'completed', outcome: { status: 'DECLINED' } };
      break;
    case 'unavailable':
      verdict = { kind: 'nothingMoved' };
      answer = { kind: 'failed_retryable' };
      break;
    case 'fenced':
      verdict = { kind: 'nothingMoved' };
      answer = { kind: 'in_progress', by: fence?.layer ?? 'bank' };
      break;
    default: {
      // Unknown: ask the bank at once, under this attempt's own fence (bank-call.ts confirm).
      const confirmed = yield* op('pay.confirm', (w) =>
        charged.kind === 'timeout' && fence
          ? askBank(w, { fence: fence.fence, byLock: fence.byLock }).charges[0]
          : undefined,
      );
      if (confirmed) {
        const outcome: Outcome = { status: 'PAID', chargeId: confirmed };
        verdict = { kind: 'settled', outcome, existing: false };
        answer = { kind: 'completed', outcome };
      } else {
        verdict = { kind: 'unknown', since: c.now() };
        answer = { kind: 'in_progress', by: 'bank' };
      }
    }
  }
  // 7: every claim hears the verdict, the innermost first.
  for (const hold of [...holds].reverse()) yield* hold.settle(verdict);
  return answer;
}

function* unwind(holds: Hold[], answer: Answer): Actor<Answer> {
  let said = answer;
  for (const hold of [...holds].reverse()) said = yield* hold.stopped(said);
  return said;
}

function unguarded(): Hold {
  return {
    tookOver: false,
    renew: () => just(undefined),
    stopped: (answer) => just(answer),
    *settle(verdict) {
      if (verdict.kind !== 'settled') return;
      const { outcome } = verdict;
      yield* op('order.record', (w) =>
        recordOutcome(w, outcome, undefined, { stateMachine: false, uniqueConstraint: false }),
      );
    },
  };
}

// ---- layer 2 ----------------------------------------------------------------------------------------------

function keyClaimOf(record: {
  owner: string | null;
  fence: number;
  firstFence: number;
  since: number;
  unknownSince: number | null;
}): Claim {
  return {
    holder: record.owner,
    fence: record.fence,
    firstFence: record.firstFence,
    claimedAt: record.since,
    unknownSince: record.unknownSince,
  };
}

function* requestKeyClaim(c: Context, id: string, key: string, databaseDecides: boolean): Actor<Claimed> {
  const claimed = yield* op('key.claim', (w) => claimKey(w, key, id));
  if (claimed.kind === 'claimed') return { kind: 'held', hold: keyHold(c, id, key, claimed.fence) };
  const { record } = claimed;
  if (record.state === 'done') {
    const outcome = record.outcome as Outcome;
    return stop({ kind: 'duplicate', outcome, by: 'requestKey', existing: record.existing ?? false });
  }
  const claim = keyClaimOf(record);
  if (isLive(claim, c.now(), LEASE_MS)) {
    // answerInProgress: the holder may be dead while the database knows the outcome.
    const owner = claim.holder as string;
    if (databaseDecides) {
      const settled = yield* reconcile(c);
      if (settled.kind === 'settled') {
        const outcome = settled.outcome;
        yield* op('key.complete', (w) => completeKey(w, key, owner, done(owner, outcome, false)));
        return stop({ kind: 'duplicate', outcome, by: 'requestKey', existing: false });
      }
    }
    return stop({ kind: 'in_progress', by: 'requestKey' });
  }
  // Abandoned: take it over.
  const fence = yield* op('key.takeOver', (w) => takeOverKey(w, key, claim, id));
  if (fence === null) return stop({ kind: 'in_progress', by: 'requestKey' });
  const hold = keyHold(c, id, key, fence, claim);
  if (databaseDecides) return { kind: 'held', hold };
  // Layer 2 alone: it asks the bank itself.
  const { verdict, askedAt } = yield* askAfterTakeover(c, { lock: `key:${key}`, token: fence }, true, claim);
  yield* op('reconcile.write', noop);
  if (verdict.kind === 'charged') {
    const outcome: Outcome = { status: 'PAID', chargeId: verdict.chargeId };
    yield* op('order.record', (w) =>
      recordOutcome(w, outcome, undefined, { stateMachine: false, uniqueConstraint: false }),
    );
    yield* op('key.complete', (w) => completeKey(w, key, id, done(id, outcome, false)));
    return stop({ kind: 'duplicate', outcome, by: 'requestKey', existing: false });
  }
  if (verdict.kind === 'nothing' || c.layers.bankKey) {
    const resumed = yield* op('key.resume', (w) => renewKey(w, key, id, fence, true));
    return resumed ? { kind: 'held', hold } : stop({ kind: 'in_progress', by: 'requestKey' });
  }
  const since = claim.unknownSince ?? askedAt;
  yield* op('key.keepUnknown', (w) => completeKey(w, key, id, unknownRecord(fence, claim.firstFence, since)));
  return stop({ kind: 'in_progress', by: 'requestKey' });
}

function done(owner: string, outcome: Outcome, existing: boolean) {
  return { state: 'done' as const, owner, outcome, existing, fence: 0, firstFence: 0, since: 0, unknownSince: null };
}
/** markRequestKeyUnknown's record: owner null (anyone may take it over at once), the chain's first token kept. */
function unknownRecord(fence: number, firstFence: number, since: number) {
  return { state: 'unknown' as const, owner: null, fence, firstFence, since, unknownSince: since };
}

function keyHold(c: Context, id: string, key: string, fence: number, seen?: Claim): Hold {
  const firstFence = seen?.firstFence ?? fence;
  const complete = (outcome: Outcome, existing: boolean) =>
    op('key.complete', (w) => completeKey(w, key, id, done(id, outcome, existing)));
  const release = () => op('key.release', (w) => releaseKey(w, key, id));
  const keepUnknown = (since: number) =>
    op('key.keepUnknown', (w) => completeKey(w, key, id, unknownRecord(fence, firstFence, since)));
  return {
    fence: { fence: { lock: `key:${key}`, token: fence }, byLock: true, layer: 'requestKey' },
    tookOver: seen !== undefined,
    *renew(at) {
      const renewed = yield* op('key.renew', (w) => {
        const ok = renewKey(w, key, id, fence, false);
        if (ok && w.keys[key]) w.keys[key].since = at;
        return ok;
      });
      return renewed ? undefined : { kind: 'in_progress', by: 'requestKey' };
    },
    *stopped(answer) {
      if (answer.kind === 'duplicate') {
        const mine = seen ? { ...answer, existing: false } : answer;
        yield* complete(mine.outcome, mine.existing);
        return mine;
      }
      if (!seen) yield* release();
      else yield* keepUnknown(seen.unknownSince ?? c.now());
      return answer;
    },
    *settle(verdict) {
      if (verdict.kind === 'settled') yield* complete(verdict.outcome, verdict.existing);
      else if (verdict.kind === 'nothingMoved') yield* release();
      else yield* keepUnknown(verdict.since);
    },
  };
}

// ---- layers 3 and 4 ---------------------------------------------------------------------------------------

function statementOf(layers: DbLayers): (w: World, holder: string) => DbClaimed {
  if (layers.stateMachine && layers.uniqueConstraint) return claimOrderWithRow;
  return layers.stateMachine ? claimOrder : insertRow;
}

function* databaseClaim(c: Context, id: string, layers: Layers): Actor<Claimed> {
  const statement = statementOf(layers);
  for (let tries = 0; ; tries++) {
    const claimed = yield* op('order.claim', (w) => statement(w, id));
    if ('fence' in claimed) return { kind: 'held', hold: orderHold(c, id, claimed.fence, layers, false) };
    const said = claimed.refusedBy;
    const answer = yield* answerDuplicate(c, id, said, layers);
    if (answer !== 'again') return answer;
    if (tries > 0) return stop({ kind: 'in_progress', by: said });
  }
}

function* answerDuplicate(
  c: Context,
  id: string,
  said: 'stateMachine' | 'uniqueConstraint',
  layers: Layers,
): Actor<Claimed | 'again'> {
  const answer = yield* reconcile(c, { payer: { id, bankKey: layers.bankKey } });
  switch (answer.kind) {
    case 'settled':
      return stop({
        kind: 'duplicate',
        outcome: answer.outcome,
        by: answer.found ? 'reconciler' : said,
        existing: !answer.found,
      });
    case 'resumed':
      return { kind: 'held', hold: orderHold(c, id, answer.fence, layers, true) };
    case 'waiting':
      return stop({ kind: 'in_progress', by: 'reconciler' });
    case 'idle':
    case 'released':
      return 'again';
    case 'running':
      return stop({ kind: 'in_progress', by: said });
  }
}

function orderHold(c: Context, id: string, fence: number, layers: Layers, tookOver: boolean): Hold {
  const layer = layers.stateMachine ? 'stateMachine' : 'uniqueConstraint';
  return {
    fence: { fence: { lock: 'order', token: fence }, byLock: false, layer },
    tookOver,
    *renew(at) {
      const renewed = yield* op('order.renew', (w) => {
        const now = w.now;
        w.now = at;
        const ok = renewDb(w, layers, id, fence);
        w.now = now;
        return ok;
      });
      return renewed ? undefined : { kind: 'in_progress', by: layer };
    },
    // Stopped before the bank only by a claim lost while away: this one, another's now; or layer 2's key, renewed
    // after it, and then this claim is still held with nothing moved (order-claim/defence.ts).
    *stopped(answer) {
      if (answer.kind === 'in_progress' && answer.by === layer) return answer;
      if (tookOver) yield* op('order.keepUnknown', (w) => keepDbUnknown(w, id, fence, c.now()));
      else yield* op('order.release', (w) => releaseDb(w, id, fence));
      return answer;
    },
    *settle(verdict) {
      if (verdict.kind === 'settled') {
        const { outcome } = verdict;
        yield* op('order.record', (w) => recordOutcome(w, outcome, { holder: id, fence }, layers));
      } else if (verdict.kind === 'nothingMoved') {
        yield* op('order.release', (w) => releaseDb(w, id, fence));
      } else {
        const { since } = verdict;
        yield* op('order.keepUnknown', (w) => keepDbUnknown(w, id, fence, since));
      }
    },
  };
}
