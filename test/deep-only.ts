/**
 * The integration files that only `npm run test:deep` runs (npm test stays within its minutes: README, Testing).
 * `npm test -- --only vitest <filter>` runs the ones a filter names too (scripts/test.ts).
 */
export const DEEP_ONLY = ['scripts/demo.int.test.ts', 'test/scale/background-jobs.int.test.ts'];
