// biome-ignore-all lint/suspicious/noTemplateCurlyInString: a patch is the source text, its ${…} included.
// Deliberate bugs the race explorer must catch (`npm run races -- --mutants`, scripts/lib/mutants.ts): each is a
// source patch, applied to a copy of the checkout, never a switch in the code. A patch whose text is no longer
// in its file is itself an error: the list must follow the code it breaks.
export type Mutant = {
  name: string;
  /** What it breaks, in words. */
  breaks: string;
  file: string;
  /** The exact text to replace (it must occur once), and what replaces it. */
  from: string;
  to: string;
  /** The explorer's files that must catch it (a payment's by default; a refund's: races-refunds.int.test.ts). */
  files?: string[];
};

const REFUNDS = ['test/races/races-refunds.int.test.ts'];

export const MUTANTS: Mutant[] = [
  {
    name: 'bank-fence-removed',
    breaks: 'the bank charges under a stale fencing token (the check in its charge statement is gone)',
    file: 'lib/payments/bank.ts',
    from: 'const holds = fence ? Prisma.sql`WHERE (SELECT token FROM raised) = ${BigInt(fence.token)}` : Prisma.empty;',
    to: 'const holds = Prisma.empty;',
  },
  {
    name: 'key-takeover-keeps-token',
    breaks: "layer 2's takeover keeps the old fencing token instead of raising it",
    file: 'lib/defences/request-key/take-over.lua',
    from: 'local fence = math.max(record.fence + 1, tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))',
    to: 'local fence = record.fence',
  },
  {
    name: 'takeover-compare-and-set-removed',
    breaks: "the database takeover's compare-and-set: it takes the claim whatever it is now",
    file: 'lib/defences/order-claim/store.ts',
    from: '(current) => sameClaim(current, seen),',
    to: '() => true,',
  },
  {
    name: 'key-takeover-compare-and-set-removed',
    breaks: "layer 2's takeover script compares nothing it judged (owner, token, renewal)",
    file: 'lib/defences/request-key/take-over.lua',
    from: 'if owner ~= ARGV[1] or record.fence ~= tonumber(ARGV[2]) or record.since ~= tonumber(ARGV[3]) then',
    to: 'if false then',
  },
  {
    name: 'no-charge-yet-is-final',
    breaks: '"no charge yet" is taken for "never charged": the settlement window is not waited for',
    file: 'lib/defences/fencing.ts',
    from: "return since + answer.windowMs <= answer.now ? { kind: 'nothing' } : { kind: 'wait', until: since + answer.windowMs };",
    to: "return { kind: 'nothing' };",
  },
  {
    name: 'oldest-doubt-forgotten',
    breaks: '"never seen" is judged against the claim just taken over, not the first of its chain (defect 1)',
    file: 'lib/payments/reconcile.ts',
    from: 'firstFence: seen.firstFence,',
    to: 'firstFence: seen.fence,',
  },
  {
    name: 'retention-blind-to-dedup-rows',
    breaks: 'retention prunes an order whose dedup row keeps a charge in doubt (defect 3)',
    file: 'lib/payments/retention.ts',
    from: `AND NOT EXISTS (
      SELECT 1 FROM idempotent_record r WHERE r.biz_type = 'PAYMENT' AND r.biz_no = o.order_no AND r.outcome IS NULL)`,
    to: '',
  },
  {
    name: 'settlement-report-ignored',
    breaks:
      'the sweep does not read the bank’s settlement report: a charge no claim records stays unrecorded (defect 2)',
    file: 'lib/payments/reconcile.ts',
    from: 'return orderNos.size + (await recordFromSettlementReport(options, now));',
    to: 'return orderNos.size;',
  },
  {
    name: 'an-event-per-record',
    breaks: 'the payment.paid event is written every time a charge is recorded, not once per charge (defect 5)',
    file: 'lib/defences/order-claim/store.ts',
    from: 'SELECT ${PAID_TOPIC}, order_no, ${json}::jsonb, ${chargeId} FROM moved',
    to: 'SELECT ${PAID_TOPIC}, order_no, ${json}::jsonb, NULL FROM moved',
  },
  {
    name: 'decline-before-fence',
    breaks: 'the bank declines before it checks the fence: a stale attempt gets a final DECLINED (defect 6)',
    file: 'lib/payments/bank.ts',
    from: 'if (request.fence && !(await raiseFence(request.fence))) throw new BankFencedError(request.fence);',
    to: '',
  },
  {
    name: 'taker-doubt-released',
    breaks:
      'a taken-over key whose own bank call ended in doubt is given back, not kept unknown: a retry of the key charges again',
    file: 'lib/defences/release.ts',
    from: "      return { kind: 'keepUnknown', since: verdict.since };",
    to: "      return tookOver ? { kind: 'release', onError: false } : { kind: 'keepUnknown', since: verdict.since };",
  },
  // ---- refunds (the refunds' explorer, test/races/refund-world.ts) ----
  {
    name: 'refund-bank-fence-removed',
    breaks: 'the bank refunds under a stale fencing token (its check before a refund is gone)',
    file: 'lib/payments/bank-refunds.ts',
    from: 'if (request.fence && !(await raiseFence(request.fence, tx))) throw new BankFencedError(request.fence);',
    to: '',
    files: REFUNDS,
  },
  {
    name: 'refund-takeover-compare-and-set-removed',
    breaks: "a refund's takeover compares nothing it judged: it takes the claim whatever it is now",
    file: 'lib/defences/refund-claim/store.ts',
    from: '(current) => sameClaim(current, seen),',
    to: '() => true,',
    files: REFUNDS,
  },
  {
    name: 'refund-claim-off-the-ledger',
    breaks: "a refund's claim does not put its amount on the order's ledger",
    file: 'lib/defences/refund-claim/store.ts',
    from: 'UPDATE orders o SET refunded_cents = o.refunded_cents + c.amount_cents, updated_at = now()',
    to: 'UPDATE orders o SET updated_at = now()',
    files: REFUNDS,
  },
  {
    name: 'refund-claim-counted-nowhere',
    breaks: "a refund's claim the order's ledger did not count (retention pruned the order) goes to the bank",
    file: 'lib/defences/refund-claim/store.ts',
    from: 'if (row.ledger === 1) return { fence: row.fence };',
    to: 'return { fence: row.fence };',
    files: REFUNDS,
  },
  {
    name: 'unguarded-refund-counted-nowhere',
    breaks: 'with no claim, a refund whose own ledger write met no order (retention pruned it) goes to the bank',
    file: 'lib/defences/refund-claim/store.ts',
    from: "return counted.length === 1 ? 'reserved' : 'gone';",
    to: "return 'reserved';",
    files: REFUNDS,
  },
  {
    name: 'refund-report-ignored',
    breaks: "the sweep does not read the bank's refunds: a refund no claim records stays unrecorded",
    file: 'lib/refunds/reconcile.ts',
    from: 'return refs.length + (await recordFromRefundReport(options, now));',
    to: 'return refs.length;',
    files: REFUNDS,
  },
  {
    name: 'lost-key-leaves-order',
    breaks: "an attempt stopped before the bank by its lost key answers still holding the order's claim (2026-12-07)",
    file: 'lib/defences/order-claim/defence.ts',
    from: "if (end.kind === 'stopped' && lostBy(end.answer, layer)) return end;",
    to: "if (end.kind === 'stopped') return end;",
  },
  {
    name: 'lost-key-leaves-refund',
    breaks: "the same for a refund: it answers still holding the refund's claim, its amount on the ledger",
    file: 'lib/defences/refund-claim/defence.ts',
    from: "if (end.kind === 'stopped' && lostBy(end.answer, layerOf(layers))) return end;",
    to: "if (end.kind === 'stopped') return end;",
    files: REFUNDS,
  },
  {
    name: 'renewal-failure-through-guards',
    breaks:
      'a store failing as a claim is renewed after a pause passes through every guard as a crash does: the attempt fails (a 503) still holding its other claims (2026-12-07)',
    file: 'lib/payments/guarded.ts',
    from: "} catch (failure) {\n    return { kind: 'stopped', answer: failedBeforeBank, failure };",
    to: '} catch (failure) {\n    throw failure;',
  },
  {
    name: 'claim-sent-twice-unrecognized',
    breaks:
      "layer 2's claim, sent twice by the Redis client, reads its own first run as another request's claim (decision 041)",
    file: 'lib/defences/request-key/claim.lua',
    from: "if ok and type(held) == 'table' and held.state == 'processing' and held.owner == record.owner",
    to: 'if false',
  },
  {
    name: 'takeover-sent-twice-unrecognized',
    breaks: "layer 2's takeover, sent twice, reads its own first run as someone else's move (decision 041)",
    file: 'lib/defences/request-key/take-over.lua',
    from: "if record.state == 'processing' and record.owner == taken.owner and record.since == taken.since then",
    to: 'if false then',
  },
];
