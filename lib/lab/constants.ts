// The lab's numbers that the browser needs too, without the schemas (and zod) of settings.ts.
export { BANK_SETTLEMENT_WINDOW_MS, DEFAULT_LEASE_MS } from '../defences/layers.ts';
