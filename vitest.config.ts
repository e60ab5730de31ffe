import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { DEEP_ONLY } from './test/deep-only.ts';

/**
 * The longest integration files, longest first. Vitest starts the files it has timed before longest first, and on a
 * clean clone, which has timed none, the largest first: these (small files driving long work) then started two
 * minutes into npm test's three and made its tail. Measured on 2026-12-06 (seconds, on a busy machine).
 */
const LONGEST_FIRST = [
  'test/hostile/room.int.test.ts', // 51
  'test/races/races.int.test.ts', // 43
  'test/hostile/edge.int.test.ts', // 39
  'test/races/races-random.int.test.ts', // 38
  'test/hostile/fuzz.int.test.ts', // 32
  'test/races/races-refunds.int.test.ts', // 27
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FIRST.findIndex((name) => file.moduleId.endsWith(name));
      return at < 0 ? LONGEST_FIRST.length : at;
    };
    // Stable: every other file keeps the order Vitest gave it.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

const alias = {
  '@': path.resolve(import.meta.dirname),
  // `server-only` throws outside React's server condition; tests run server code in plain Node.
  'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js'),
};

export default defineConfig({
  resolve: { alias },
  test: {
    // The integration files mostly wait (on servers, on apps they start); each worker has its own Redis
    // database (test/integration-setup.ts) and every file its own orders or ports, so four run at once.
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: [
            'lib/**/*.test.ts',
            'app/**/*.test.ts',
            'scripts/**/*.test.ts',
            'test/**/*.test.ts',
            'conformance/**/*.test.ts',
          ],
          exclude: ['**/*.int.test.ts'],
          // Unit tests compute and never wait; some compute a lot (every source file parsed, the OpenAPI document
          // validated), and Vitest's 5 s failed them on a machine running two suites side by side.
          testTimeout: 30_000,
          // They keep no state between files (no mocks, no environment, no global registered), so a worker runs
          // file after file instead of starting a process for each: measured 55 s of CPU down to 19 s.
          isolate: false,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'integration',
          include: [
            'lib/**/*.int.test.ts',
            'scripts/**/*.int.test.ts',
            'test/**/*.int.test.ts',
            'conformance/**/*.int.test.ts',
          ],
          exclude: ['test/cluster/**', ...DEEP_ONLY],
          setupFiles: ['./test/integration-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          // `npm run test:deep`: the launcher with its own servers, the background jobs on 100,000 orders, and again,
          // with more inputs (scripts/test.ts sets how many), the race explorer's random schedules and the fuzzing.
          name: 'deep',
          include: [
            ...DEEP_ONLY,
            'test/races/races-random.int.test.ts',
            'test/races/races-refunds.int.test.ts',
            'test/hostile/fuzz.int.test.ts',
          ],
          setupFiles: ['./test/integration-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          // The files whose Redis use a Redis Cluster changes (layers 1-2, the lab's settings, the rate limit,
          // the events), again with REDIS_URL=redis-cluster://… and one worker (a cluster has database 0 alone),
          // and the storm of an app on the cluster. scripts/test.ts runs it beside `integration` (decision 020).
          name: 'cluster',
          include: [
            'lib/payments/pay.int.test.ts',
            'lib/payments/key-strategy.int.test.ts',
            'lib/payments/orders.int.test.ts',
            'lib/lab/settings-store.int.test.ts',
            'lib/lab/timeline.int.test.ts',
            'lib/http/rate-limit.int.test.ts',
            'lib/events/events.int.test.ts',
            'test/cluster/**/*.int.test.ts',
          ],
          setupFiles: ['./test/integration-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
