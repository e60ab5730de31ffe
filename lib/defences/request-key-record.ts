// Layer 2's pure parts: the key's name, the payload fingerprint, the stored record and what a second
// request should make of it. No I/O, so it is unit-tested without Redis.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { CallerScope } from '../session.ts';

/**
 * The Idempotency-Key header: 1-255 visible ASCII characters, as Stripe accepts. The key names the
 * intent, chosen by the caller and kept across its retries; it is never derived from the parameters.
 */
export const IdempotencyKeySchema = z
  .string()
  .min(1, { message: 'must not be empty' })
  .max(255, { message: 'must be at most 255 characters' })
  .regex(/^[\x21-\x7E]+$/, { message: 'must be visible ASCII characters without spaces' });

/** Scoped per caller: one caller can never read another caller's stored outcome. */
export function requestKeyName(caller: CallerScope, key: string): string {
  return `idem:${caller}:${key}`;
}

/**
 * A fingerprint of the payload, to detect one key reused for a different request. It is not the key:
 * a hash of the parameters changes with any timestamp in them (the article's first detail).
 */
export function fingerprintOf(payload: Record<string, string | number>): string {
  const canonical = JSON.stringify(
    Object.keys(payload)
      .sort()
      .map((name) => [name, payload[name]]),
  );
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}

const RecordSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('processing'), owner: z.string(), fingerprint: z.string(), since: z.number() }),
  z.object({ state: z.literal('unknown'), owner: z.string(), fingerprint: z.string(), since: z.number() }),
  z.object({ state: z.literal('done'), owner: z.string(), fingerprint: z.string(), outcome: z.unknown() }),
]);
export type RequestKeyRecord = z.infer<typeof RecordSchema>;

export function encodeRecord(record: RequestKeyRecord): string {
  return JSON.stringify(record);
}

export function decodeRecord(raw: string): RequestKeyRecord | undefined {
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export type ClaimDecision =
  /** This request owns the key now and must finish the work. */
  | { kind: 'claimed' }
  /** The first request finished: answer with its outcome (result idempotency, the second detail). */
  | { kind: 'replay'; outcome: unknown }
  /** The first request is still running. */
  | { kind: 'in_progress'; since: number; owner?: string }
  /** The first request's bank call timed out: only reconciliation knows the outcome. */
  | { kind: 'unknown'; owner: string }
  /** The same key was sent with a different payload. */
  | { kind: 'mismatch' };

/** What a request should do, given the record that was already stored under its key. */
export function decideOnExisting(existing: RequestKeyRecord | undefined, fingerprint: string): ClaimDecision {
  // A record we cannot read is treated as a running claim: refusing is safe, proceeding is not.
  if (!existing) return { kind: 'in_progress', since: Date.now() };
  if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
  switch (existing.state) {
    case 'done':
      return { kind: 'replay', outcome: existing.outcome };
    case 'unknown':
      return { kind: 'unknown', owner: existing.owner };
    case 'processing':
      return { kind: 'in_progress', since: existing.since, owner: existing.owner };
  }
}
