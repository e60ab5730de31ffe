// The lab's numbers that the browser needs too, without the schemas (and zod) of settings.ts.

/** The bank guarantees that a charge it accepted lands within this long, or never (lib/payments/bank.ts). */
export const BANK_SETTLEMENT_WINDOW_MS = 10_000;
/** How long a claim lives unrenewed, unless the lab (or REQUEST_KEY_LEASE_MS) says otherwise. */
export const DEFAULT_LEASE_MS = 30_000;
