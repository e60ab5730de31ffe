// Layer 2's pure parts: the key's name, the payload fingerprint, the stored record and what a second
// request should make of it. No I/O, so it is unit-tested without Redis.
import { hash } from 'node:crypto';
import { z } from 'zod';
import type { CallerScope } from '../../session.ts';
import { type ClaimState, judgeClaim } from '../fencing.ts';

/**
 * Scoped per caller: one caller can never read another caller's stored outcome. The braces are a Redis Cluster
 * hash tag around the whole intent: the caller and its key pick the slot together (a `{…}` in the caller's key
 * cannot pick it alone), and any key a later script uses beside this one, named `…{<caller>:<key>}…`, is in
 * the same slot (decision 020).
 */
export function requestKeyName(caller: CallerScope, key: string): string {
  return `idem:{${caller}:${key}}`;
}

/**
 * A fingerprint of the payload, to detect one key reused for a different request. It is not the key:
 * a hash of the parameters changes with any timestamp in them (the article's first detail).
 */
export function fingerprintOf(payload: unknown): string {
  return hash('sha256', canonicalOf(payload), 'base64url').slice(0, 22);
}

/** A payload as one string, its fields in name order at every depth (the order they were sent in does not matter). */
export function canonicalOf(payload: unknown): string {
  return JSON.stringify(sortedDeep(payload));
}

function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedDeep);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  return Object.keys(record)
    .sort()
    .map((name) => [name, sortedDeep(record[name])]);
}

// A claim carries its fencing token (`fence`, given by Redis when the key is claimed or taken over), the token
// of the first claim of its chain of takeovers (`firstFence`, kept by every takeover), when it was taken or last
// renewed (`since`), and since when its outcome is in doubt (`unknownSince`).
/** The operation a key was first used for: a key is bound to its method and path (the payment pipeline's is this). */
export const PAYMENTS_ENDPOINT = 'POST /api/payments';
const endpoint = z.string().default(PAYMENTS_ENDPOINT);

const claim = {
  fingerprint: z.string(),
  endpoint,
  since: z.number(),
  fence: z.number().default(0),
  firstFence: z.number().optional(),
  unknownSince: z.number().nullable().default(null),
};
const RecordSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('processing'), owner: z.string(), ...claim }),
  /** The outcome is unknown; `owner` null once nobody holds the claim (a retry may take it over at once). */
  z.object({ state: z.literal('unknown'), owner: z.string().nullable(), ...claim }),
  z.object({
    state: z.literal('done'),
    owner: z.string(),
    fingerprint: z.string(),
    endpoint,
    outcome: z.unknown(),
    /** The first answer reported a payment made for another intent (HTTP 200), not this key's own (201). */
    existing: z.boolean().default(false),
  }),
]);
export type RequestKeyRecord = z.input<typeof RecordSchema>;
type StoredRecord = z.output<typeof RecordSchema>;
type ClaimRecord = Exclude<StoredRecord, { state: 'done' }>;

export function encodeRecord(record: RequestKeyRecord): string {
  return JSON.stringify(record);
}

export function decodeRecord(raw: string): StoredRecord | undefined {
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export type ClaimDecision =
  /** This request owns the key now (under this fencing token) and must finish the work. */
  | { kind: 'claimed'; fence: number }
  /** The first request finished: answer exactly as it was answered (result idempotency, the second detail). */
  | { kind: 'replay'; outcome: unknown; existing: boolean }
  /** The first request is still running (it holds the key within its lease). */
  | { kind: 'in_progress'; owner?: string }
  /**
   * The claim is abandoned: its holder stalled or died past its lease, or its bank call timed out and the
   * outcome is unknown. The caller may take it over (a compare-and-set on exactly this claim).
   */
  | { kind: 'abandoned'; claim: RequestKeyClaim }
  /** The same key was sent with a different payload, or to another endpoint (`usedOn`: the first one). */
  | { kind: 'mismatch'; usedOn?: string };

/** A claim on a key, as the recovery path judges and takes it over. */
export type RequestKeyClaim = ClaimState & { unknown: boolean };

export function claimOf(record: ClaimRecord): RequestKeyClaim {
  return {
    holder: record.owner,
    fence: record.fence,
    firstFence: record.firstFence ?? record.fence,
    claimedAt: record.since,
    unknownSince: record.unknownSince,
    unknown: record.state === 'unknown',
  };
}

/** What a request should do, given the record that was already stored under its key. */
export function decideOnExisting(
  existing: StoredRecord | undefined,
  fingerprint: string,
  context: { now: number; leaseMs: number; endpoint?: string },
): ClaimDecision {
  // A record we cannot read is treated as a running claim: refusing is safe, proceeding is not.
  if (!existing) return { kind: 'in_progress' };
  if (existing.endpoint !== (context.endpoint ?? PAYMENTS_ENDPOINT))
    return { kind: 'mismatch', usedOn: existing.endpoint };
  if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (existing.state === 'done') return { kind: 'replay', outcome: existing.outcome, existing: existing.existing };
  const claim = claimOf(existing);
  // An unknown outcome nobody holds is abandoned at once; a held claim only once its lease has run out.
  const liveness = judgeClaim(claim, context);
  if (liveness.kind === 'dead') return { kind: 'abandoned', claim };
  return { kind: 'in_progress', owner: liveness.holder };
}
