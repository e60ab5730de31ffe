import path from 'node:path';
import { defineConfig } from 'vitest/config';

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
          exclude: ['test/cluster/**'],
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
