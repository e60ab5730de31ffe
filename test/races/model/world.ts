// The protocol model's world: the order row, its dedup row, the request keys, the bank's ledger and fences,
// the outbox, and the clock; and every statement, Lua script and bank call of the payment path as a pure
// function on it, each mirroring one in lib/ (named after it). The model checker (checker.ts) explores what
// the actors (actors.ts) do with them, in every order, and the race explorer holds the real code to it.
//
// Each function here is one atomic operation of the real code: one SQL statement or transaction, one Lua
// script, one bank call. Between two of them another actor may run; within one, nobody. The world is copied
// before each step (`cloneWorld`), so a function may change it in place.

/**
 * Bugs the model's own tests put into it, to see its checker find them (a checker that finds nothing in a
 * broken protocol proves nothing): 'judgeLastClaim' judges "never seen" against the claim just taken over
 * (defect 1); 'bankIgnoresFence' charges under any token.
 */
export const MODEL_BUGS = new Set<'judgeLastClaim' | 'bankIgnoresFence'>();

export const LEASE_MS = 100;
export const WINDOW_MS = 10_000;
export const LATE_MS = 2_000;

export type Outcome = { status: 'PAID'; chargeId: string } | { status: 'DECLINED' };
export type Status = 'PENDING' | 'PROCESSING' | 'PAID' | 'DECLINED' | 'UNKNOWN';

export type OrderRow = {
  status: Status;
  holder: string | null;
  claimedAt: number | null;
  fence: number;
  firstFence: number | null;
  unknownSince: number | null;
  chargeId: string | null;
};
export type DedupRow = {
  owner: string | null;
  fence: number;
  firstFence: number;
  claimedAt: number;
  unknownSince: number | null;
  outcome: Outcome | null;
};
export type KeyRecord = {
  state: 'processing' | 'unknown' | 'done';
  owner: string | null;
  fence: number;
  firstFence: number;
  since: number;
  unknownSince: number | null;
  outcome?: Outcome;
  existing?: boolean;
};
export type Charge = { id: string; landsAt: number; key: string | null; lock: string | null };

export type World = {
  now: number;
  order: OrderRow;
  row: DedupRow | null;
  keys: Record<string, KeyRecord>;
  charges: Charge[];
  fences: Record<string, number>;
  /** The charge ids with a payment.paid event (one per charge: the outbox's unique key). */
  events: string[];
  /** Redis's clock, as the key scripts read it: every new key token is above every older one. */
  keyClock: number;
};

export function newWorld(): World {
  return {
    now: 0,
    order: {
      status: 'PENDING',
      holder: null,
      claimedAt: null,
      fence: 0,
      firstFence: null,
      unknownSince: null,
      chargeId: null,
    },
    row: null,
    keys: {},
    charges: [],
    fences: {},
    events: [],
    keyClock: 0,
  };
}

export function cloneWorld(world: World): World {
  return {
    ...world,
    order: { ...world.order },
    row: world.row && { ...world.row },
    keys: Object.fromEntries(Object.entries(world.keys).map(([name, record]) => [name, { ...record }])),
    charges: world.charges.map((charge) => ({ ...charge })),
    fences: { ...world.fences },
    events: [...world.events],
  };
}

/** A claim as the recovery path judges it (lib/defences/fencing.ts ClaimState). */
export type Claim = {
  holder: string | null;
  fence: number;
  firstFence: number;
  claimedAt: number;
  unknownSince: number | null;
};

export function isLive(claim: Claim, now: number, leaseMs: number, dead?: (holder: string) => boolean): boolean {
  if (claim.holder === null || dead?.(claim.holder)) return false;
  return claim.claimedAt + leaseMs > now;
}

// ---- layer 2: the request key's scripts (lib/defences/*.lua) -------------------------------------------

export type KeyClaimed = { kind: 'claimed'; fence: number } | { kind: 'existing'; record: KeyRecord };

/** claim-request-key.lua */
export function claimKey(w: World, name: string, owner: string): KeyClaimed {
  const current = w.keys[name];
  if (current) return { kind: 'existing', record: { ...current } };
  const fence = ++w.keyClock;
  w.keys[name] = { state: 'processing', owner, fence, firstFence: fence, since: w.now, unknownSince: null };
  return { kind: 'claimed', fence };
}

/** take-over-request-key.lua: a compare-and-set on the owner, the token and the renewal judged. */
export function takeOverKey(w: World, name: string, seen: Claim, taker: string): number | null {
  const current = w.keys[name];
  if (!current || current.state === 'done') return null;
  if (
    (current.owner ?? '') !== (seen.holder ?? '') ||
    current.fence !== seen.fence ||
    current.since !== seen.claimedAt
  ) {
    return null;
  }
  const fence = Math.max(current.fence + 1, ++w.keyClock);
  w.keys[name] = {
    state: 'processing',
    owner: taker,
    fence,
    firstFence: current.firstFence,
    since: w.now,
    unknownSince: seen.unknownSince,
  };
  return fence;
}

/** renew-request-key.lua (`resumed`: the doubt's start is cleared). */
export function renewKey(w: World, name: string, owner: string, fence: number, resumed: boolean): boolean {
  const current = w.keys[name];
  if (current?.state !== 'processing' || current.owner !== owner || current.fence !== fence) return false;
  current.since = w.now;
  if (resumed) current.unknownSince = null;
  return true;
}

/** complete-request-key.lua: the final outcome, or "unknown", written by the owner only. */
export function completeKey(w: World, name: string, owner: string, record: KeyRecord): boolean {
  const current = w.keys[name];
  if (!current || current.owner !== owner || current.state === 'done') return false;
  w.keys[name] = record;
  return true;
}

/** release-request-key.lua */
export function releaseKey(w: World, name: string, owner: string): boolean {
  const current = w.keys[name];
  if (!current || current.owner !== owner || current.state === 'done') return false;
  delete w.keys[name];
  return true;
}

// ---- layers 3 and 4: the claim statements (lib/defences/order-claim/store.ts) ----------------------

/** What a claim statement came to: a token, or the layer whose statement refused it (or the order is gone). */
export type DbClaimed = { fence: number } | { refusedBy: 'stateMachine' | 'uniqueConstraint' };

/** claimOrder: PENDING → PROCESSING, a new generation. */
export function claimOrder(w: World, holder: string): DbClaimed {
  const { order } = w;
  if (order.status !== 'PENDING') return { refusedBy: 'stateMachine' };
  order.fence += 1;
  Object.assign(order, { status: 'PROCESSING', holder, claimedAt: w.now, unknownSince: null, firstFence: order.fence });
  return { fence: order.fence };
}

/** claimOrderWithDedupRow: both, or neither (a unique violation rolls the statement back). */
export function claimOrderWithRow(w: World, holder: string): DbClaimed {
  if (w.order.status !== 'PENDING') return { refusedBy: 'stateMachine' };
  if (w.row) return { refusedBy: 'uniqueConstraint' };
  const claimed = claimOrder(w, holder) as { fence: number };
  w.row = newRow(holder, claimed.fence, w.now);
  return claimed;
}

/** insertPaymentDedupRow: the row under the order's next generation. */
export function insertRow(w: World, owner: string): DbClaimed {
  if (w.row) return { refusedBy: 'uniqueConstraint' };
  w.order.fence += 1;
  w.row = newRow(owner, w.order.fence, w.now);
  return { fence: w.order.fence };
}

function newRow(owner: string, fence: number, now: number): DedupRow {
  return { owner, fence, firstFence: fence, claimedAt: now, unknownSince: null, outcome: null };
}

/** The database layers a claim stands for. */
export type DbLayers = { stateMachine: boolean; uniqueConstraint: boolean };

/** order-claim/store.ts renewClaim: each claim renewed if still this attempt's. */
export function renewDb(w: World, layers: DbLayers, holder: string, fence: number): boolean {
  const { order, row } = w;
  const orderOk = order.holder === holder && order.fence === fence && order.status === 'PROCESSING';
  if (orderOk) order.claimedAt = w.now;
  const rowOk = row !== null && row.owner === holder && row.fence === fence && row.outcome === null;
  if (rowOk && row) row.claimedAt = w.now;
  return (!layers.stateMachine || orderOk) && (!layers.uniqueConstraint || rowOk);
}

/** order-claim/store.ts releaseClaim: the bank failed before charging. */
export function releaseDb(w: World, holder: string, fence: number): void {
  const { order, row } = w;
  if (order.holder === holder && order.fence === fence && order.status === 'PROCESSING') {
    Object.assign(order, { status: 'PENDING', holder: null, claimedAt: null });
  }
  if (row && row.owner === holder && row.fence === fence && row.outcome === null) w.row = null;
}

/** order-claim/store.ts keepClaimUnknown: the bank's answer is unknown. */
export function keepDbUnknown(w: World, holder: string, fence: number, since: number): void {
  const { order, row } = w;
  if (order.holder === holder && order.fence === fence && order.status === 'PROCESSING') {
    Object.assign(order, { status: 'UNKNOWN', holder: null, unknownSince: since });
  }
  if (row && row.owner === holder && row.fence === fence && row.outcome === null) {
    Object.assign(row, { owner: null, unknownSince: since });
  }
}

/** order-claim/store.ts recordOutcome (`hold` undefined: recordUnguarded). True when every claim was still this attempt's. */
export function recordOutcome(
  w: World,
  outcome: Outcome,
  hold: { holder: string; fence: number } | undefined,
  layers: DbLayers,
): boolean {
  const { order, row } = w;
  const claimed = (holder: string | null, fence: number) =>
    hold !== undefined && holder === hold.holder && fence === hold.fence;
  const orderGuard = layers.stateMachine
    ? claimed(order.holder, order.fence) && order.status === 'PROCESSING'
    : outcome.status === 'DECLINED'
      ? order.status !== 'PAID'
      : true;
  if (orderGuard) {
    Object.assign(order, { status: outcome.status, holder: null, claimedAt: null, unknownSince: null });
    if (outcome.status === 'PAID') {
      order.chargeId = outcome.chargeId;
      addEvent(w, outcome.chargeId);
    }
  }
  let rowOk = false;
  if (layers.uniqueConstraint && row && row.outcome === null && claimed(row.owner, row.fence)) {
    row.outcome = outcome;
    rowOk = true;
  }
  return (!layers.stateMachine || orderGuard) && (!layers.uniqueConstraint || rowOk);
}

function addEvent(w: World, chargeId: string): void {
  if (!w.events.includes(chargeId)) w.events.push(chargeId);
}

// ---- the recovery path (lib/defences/order-claim/store.ts) ----------------------------------------------------

/** readClaim: the order and its claims, as they are. */
export type View = {
  status: Status;
  fence: number;
  recorded: Outcome | undefined;
  order: Claim | null;
  row: Claim | null;
  /** The row as stored, to compare before writing. */
  rowKey: string | null;
};

export function readClaim(w: World): View {
  const { order, row } = w;
  const recorded: Outcome | undefined =
    order.status === 'PAID' && order.chargeId
      ? { status: 'PAID', chargeId: order.chargeId }
      : order.status === 'DECLINED'
        ? { status: 'DECLINED' }
        : (row?.outcome ?? undefined);
  const claimed = order.status === 'PROCESSING' || order.status === 'UNKNOWN';
  return {
    status: order.status,
    fence: order.fence,
    recorded,
    order: claimed
      ? {
          holder: order.holder,
          fence: order.fence,
          firstFence: order.firstFence ?? order.fence,
          claimedAt: order.claimedAt ?? 0,
          unknownSince: order.unknownSince,
        }
      : null,
    row:
      row && row.outcome === null
        ? {
            holder: row.owner,
            fence: row.fence,
            firstFence: row.firstFence,
            claimedAt: row.claimedAt,
            unknownSince: row.unknownSince,
          }
        : null,
    rowKey: row ? JSON.stringify([row.owner, row.fence, row.claimedAt, row.outcome !== null]) : null,
  };
}

export function claimOfView(view: View): Claim | null {
  return view.order ?? view.row;
}

function sameClaim(a: View, b: View): boolean {
  return (
    a.status === b.status &&
    a.fence === b.fence &&
    JSON.stringify(a.order) === JSON.stringify(b.order) &&
    a.rowKey === b.rowKey
  );
}

function heldBy(view: View, holder: string, fence: number): boolean {
  const claims = [view.order, view.row].filter((claim): claim is Claim => claim !== null);
  return (
    view.fence === fence &&
    claims.length > 0 &&
    claims.every((claim) => claim.holder === holder && claim.fence === fence)
  );
}

/** completeStaleRow */
export function completeStaleRow(w: World, seen: View, outcome: Outcome): void {
  const current = readClaim(w);
  if (current.rowKey === seen.rowKey && current.row !== null && w.row) w.row.outcome = outcome;
}

/** takeOverClaim: only if the order and its row are exactly as seen; the token rises, the chain's first kept. */
export function takeOverDb(w: World, seen: View, taker: string): number | null {
  const current = readClaim(w);
  if (!sameClaim(current, seen)) return null;
  const fence = current.fence + 1;
  const { order, row } = w;
  if (current.order) {
    Object.assign(order, {
      status: 'UNKNOWN',
      holder: taker,
      claimedAt: w.now,
      firstFence: order.firstFence ?? order.fence,
    });
  }
  order.fence = fence;
  if (current.row && row) Object.assign(row, { owner: taker, fence, claimedAt: w.now });
  return fence;
}

/** settleClaim: PAID by the charge the bank has, under the taker's claim. */
export function settleDb(w: World, holder: string, fence: number, outcome: Outcome & { status: 'PAID' }): boolean {
  const current = readClaim(w);
  if (!heldBy(current, holder, fence)) return false;
  const { order } = w;
  if (order.status === 'PENDING' || order.status === 'UNKNOWN' || order.status === 'DECLINED') {
    Object.assign(order, {
      status: 'PAID',
      chargeId: outcome.chargeId,
      holder: null,
      claimedAt: null,
      unknownSince: null,
    });
    addEvent(w, outcome.chargeId);
  }
  if (current.row && w.row) w.row.outcome = outcome;
  return true;
}

/** releaseTakenClaim: nothing moved and nothing can land. */
export function releaseTakenDb(w: World, holder: string, fence: number): boolean {
  const current = readClaim(w);
  if (!heldBy(current, holder, fence)) return false;
  if (current.order) Object.assign(w.order, { status: 'PENDING', holder: null, claimedAt: null, unknownSince: null });
  if (current.row) w.row = null;
  return true;
}

/** resumeTakenClaim: the taker, a payment, goes on to pay. */
export function resumeTakenDb(w: World, holder: string, fence: number): boolean {
  const current = readClaim(w);
  if (!heldBy(current, holder, fence)) return false;
  if (current.order) Object.assign(w.order, { status: 'PROCESSING', claimedAt: w.now, unknownSince: null });
  if (current.row && w.row) Object.assign(w.row, { claimedAt: w.now, unknownSince: null });
  return true;
}

/** leaveClaimInDoubt */
export function leaveDbInDoubt(w: World, holder: string, fence: number, since: number): boolean {
  const current = readClaim(w);
  if (!heldBy(current, holder, fence)) return false;
  if (current.order) Object.assign(w.order, { holder: null, unknownSince: w.order.unknownSince ?? since });
  if (current.row && w.row) Object.assign(w.row, { owner: null, unknownSince: w.row.unknownSince ?? since });
  return true;
}

/** recordUnrecordedCharge: the settlement report's charge, on an order nothing holds. */
export function recordReported(w: World, chargeId: string): boolean {
  const { order, row } = w;
  if (order.status !== 'PENDING' && order.status !== 'DECLINED') return false;
  if (row && row.outcome === null) return false;
  Object.assign(order, { status: 'PAID', chargeId, holder: null, claimedAt: null, unknownSince: null });
  addEvent(w, chargeId);
  return true;
}

// ---- the bank (lib/payments/bank.ts) --------------------------------------------------------------------

export type Fence = { lock: string; token: number };
export type BankFault = 'none' | 'lateCharge' | 'timeoutAfterCharge' | 'bankError' | 'decline';
export type ChargeAnswer =
  | { kind: 'charged'; chargeId: string; replayed: boolean }
  | { kind: 'declined' }
  | { kind: 'unavailable' }
  | { kind: 'fenced' }
  | { kind: 'timeout' }
  | { kind: 'keyInUse' };

/** Raises the lock's token to the fence's if it is not lower; false when the fence was stale. */
function raise(w: World, fence: Fence): boolean {
  const token = Math.max(w.fences[fence.lock] ?? fence.token, fence.token);
  w.fences[fence.lock] = token;
  return token === fence.token || MODEL_BUGS.has('bankIgnoresFence');
}

/** chargeCard */
export function chargeCard(
  w: World,
  request: { key: string | null; fence: Fence | null },
  fault: BankFault,
): ChargeAnswer {
  if (fault === 'bankError') return { kind: 'unavailable' };
  const byKey = (key: string) => w.charges.find((charge) => charge.key === key);
  if (fault === 'decline') {
    if (request.fence && !raise(w, request.fence)) return { kind: 'fenced' };
    if (!request.key || !byKey(request.key)) return { kind: 'declined' };
  }
  if (request.fence && !raise(w, request.fence)) return { kind: 'fenced' };
  const existing = request.key ? byKey(request.key) : undefined;
  if (existing) {
    return existing.landsAt > w.now ? { kind: 'keyInUse' } : { kind: 'charged', chargeId: existing.id, replayed: true };
  }
  const landsAt = fault === 'lateCharge' && w.charges.length === 0 ? w.now + LATE_MS : w.now;
  const id = `c${w.charges.length + 1}`;
  w.charges.push({ id, landsAt, key: request.key, lock: request.fence?.lock ?? null });
  if (fault === 'timeoutAfterCharge' || landsAt > w.now) return { kind: 'timeout' };
  return { kind: 'charged', chargeId: id, replayed: false };
}

/** askBank: the charges landed (those made under the lock, `byLock`), and the token before this question raised it. */
export function askBank(
  w: World,
  query: { fence: Fence | null; byLock: boolean },
): { charges: string[]; previousToken: number | null } {
  const previous = query.fence ? (w.fences[query.fence.lock] ?? null) : null;
  if (query.fence) raise(w, query.fence);
  const charges = w.charges
    .filter((charge) => charge.landsAt <= w.now && (!query.byLock || charge.lock === query.fence?.lock))
    .sort((a, b) => a.landsAt - b.landsAt)
    .map((charge) => charge.id);
  return { charges, previousToken: previous };
}

/** What a charge found by a taker allows (lib/defences/fencing.ts judgeBankAnswer). */
export type AfterBank = { kind: 'charged'; chargeId: string } | { kind: 'nothing' } | { kind: 'wait'; until: number };

export function judgeBankAnswer(
  answer: { charges: string[]; previousToken: number | null },
  seen: Claim,
  now: number,
): AfterBank {
  const [charge] = answer.charges;
  if (charge) return { kind: 'charged', chargeId: charge };
  const first = MODEL_BUGS.has('judgeLastClaim') ? seen.fence : seen.firstFence;
  if (answer.previousToken === null || answer.previousToken < first) return { kind: 'nothing' };
  const since = seen.unknownSince ?? now;
  return since + WINDOW_MS <= now ? { kind: 'nothing' } : { kind: 'wait', until: since + WINDOW_MS };
}

/** The settlement report: the charges landed, oldest first. */
export function settlementReport(w: World): string[] {
  return w.charges
    .filter((charge) => charge.landsAt <= w.now)
    .sort((a, b) => a.landsAt - b.landsAt)
    .map((charge) => charge.id);
}
