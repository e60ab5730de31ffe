import 'server-only';
// What never changes about an order once it exists, its amount and its owner, kept in Redis beside the row for
// an hour from its creation, so that a payment learns who may pay it and what it costs with one cheap GET: the
// first thing the database sees of the payment is its claim (bench/results.md, section 4). Only for an order
// with no settings of its own, the common case: it runs with its owner's lab or the global one, both in Redis
// already. An order created with settings of its own (the lab's scenarios and tests, which may change them in
// place) is read from the row on every payment, as is one whose facts are missing (an hour later, Redis forgot
// them in a failover, an order written by hand) or unreadable, and a caller other than the owner (the
// sessions an order lets in change). The row is the truth. One key per order, one command each (Redis Cluster).
// With the lab off an API payment that states its amount reads neither: its claim checks them (decision 036).
import { getRedis } from '../redis.ts';

export type OrderFacts = { amountCents: number; owner: string | null };

/** How long the facts are kept: a checkout is paid within minutes; later payments read the row. */
export const ORDER_FACTS_TTL_MS = 3_600_000;

export function orderFactsKey(orderNo: string): string {
  return `order:facts:${orderNo}`;
}

export function encodeOrderFacts(facts: OrderFacts): string {
  return JSON.stringify({ amountCents: facts.amountCents, owner: facts.owner });
}

/** Keeps a new order's facts. Never fails the order's creation: without them, its payments read the row. */
export function rememberOrderFacts(orderNo: string, facts: OrderFacts): void {
  getRedis()
    .set(orderFactsKey(orderNo), encodeOrderFacts(facts), 'PX', ORDER_FACTS_TTL_MS)
    .catch(() => {});
}

/** The order's facts as kept, or undefined (none kept, unreadable, or Redis failed: the caller reads the row). */
export async function recallOrderFacts(orderNo: string): Promise<OrderFacts | undefined> {
  const raw = await getRedis()
    .get(orderFactsKey(orderNo))
    .catch(() => null);
  if (raw === null) return undefined;
  try {
    const { amountCents, owner } = JSON.parse(raw) as Partial<OrderFacts>;
    const readable = Number.isInteger(amountCents) && (owner === null || typeof owner === 'string');
    return readable ? { amountCents: amountCents as number, owner: owner as string | null } : undefined;
  } catch {
    return undefined;
  }
}
