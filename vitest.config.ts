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
          include: ['lib/**/*.test.ts', 'app/**/*.test.ts', 'scripts/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['**/*.int.test.ts'],
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'integration',
          include: ['lib/**/*.int.test.ts', 'scripts/**/*.int.test.ts', 'test/**/*.int.test.ts'],
          setupFiles: ['./test/integration-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
