// What `npm test` leaves to `npm run test:deep`, so that it stays within its minutes (README, Testing): the proof
// matrix's single-layer columns (FULL_MATRIX_TAG, in matrix.ts), and the tests tagged DEEP_TAG, each a repetition
// or a widening of a check npm test already makes once: the workshop's exercises but 1, 12, 14 and 15
// (workshop.spec.ts says why), the recovery storms under one layer alone, the key-strategy matrix's wrong keys on
// the proof matrix's rows, the refund-key matrix's wrong keys, the answer matrix's second column, and everything in
// Chinese but the checkout. CI runs both commands.
import { FULL_MATRIX_TAG } from './scenarios/matrix';

export const DEEP_TAG = '@deep';

/** Playwright's `--grep` of what npm test leaves out, and the deep run runs. */
export const LEFT_TO_DEEP = `${FULL_MATRIX_TAG}|${DEEP_TAG}`;
