// Integration tests run against the real PostgreSQL and Redis that scripts/test.ts started. Each vitest
// worker gets its own Redis logical database, so a test that empties Redis ("Redis lost its memory")
// only empties its own. A Redis Cluster (REDIS_URL redis-cluster://…, the `cluster` project) has database 0
// alone: its run has one worker instead (scripts/test.ts).
import { afterAll } from 'vitest';
import { isRedisClusterUrl } from '../lib/redis-cluster-url.ts';

const redisUrl = process.env.REDIS_URL;
if (!redisUrl || !process.env.DATABASE_URL) {
  throw new Error('Integration tests need DATABASE_URL and REDIS_URL: run them with `npm test`.');
}
if (!isRedisClusterUrl(redisUrl)) {
  const worker = Number(process.env.VITEST_POOL_ID ?? '1');
  const url = new URL(redisUrl);
  url.pathname = `/${worker % 16}`;
  process.env.REDIS_URL = url.toString();
}

// The lab, as the app registers it: its settings decide what payments run under, its timeline reads their
// spans. A crash fault throws (test/payments.ts) instead of killing the test's process.
// Its configuration is read here without fixing env(): a test file may set variables of its own first.
const { flushLab, registerLab } = await import('../lib/lab/register.ts');
const { parseEnv } = await import('../lib/env.ts');
const { simulatedCrash } = await import('./payments.ts');
registerLab({ crash: simulatedCrash, config: parseEnv(process.env) });

afterAll(async () => {
  // The lanes of the file's last payments, which the lab publishes on its next tick: out now, while the client is
  // open. Published after it was quit, they logged "[timeline] not published" as the worker closed, which Vitest
  // reports as an unhandled error (EnvironmentTeardownError, once on 2026-12-07).
  await flushLab();
  const globals = globalThis as { prisma?: { $disconnect(): Promise<void> }; redis?: { quit(): Promise<unknown> } };
  await globals.prisma?.$disconnect();
  await globals.redis?.quit();
});
