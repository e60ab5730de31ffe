// Section 5: a peer, @aws-lambda-powertools/idempotency, against this project's layer 2 on the same Redis.
import { randomBytes } from 'node:crypto';

export async function peerBenchmark(redisUrl: string, databaseUrl: string) {
  // This project's layer 2, on the same Redis, through its own module (one connection). The module reads the
  // environment once for the process: the chaos storm's receipts (the same servers) read it later.
  process.env.REDIS_URL = redisUrl;
  process.env.DATABASE_URL = databaseUrl;
  const { claimRequestKey, completeRequestKey } = await import('../../../lib/defences/request-key/store.ts');
  const { makeIdempotent, IdempotencyConfig } = await import('@aws-lambda-powertools/idempotency');
  const { CachePersistenceLayer } = await import('@aws-lambda-powertools/idempotency/cache');
  const { createClient } = await import('@redis/client');
  const client = await createClient({ url: redisUrl }).connect();

  const N = 2_000;
  const CONCURRENCY = 20;
  const runPool = async (work: (i: number) => Promise<unknown>) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < N) await work(next++);
      }),
    );
    return Math.round(N / ((performance.now() - started) / 1000));
  };
  const tag = randomBytes(4).toString('hex');

  const ours = async (key: string, work: () => Promise<unknown>) => {
    const decision = await claimRequestKey(
      `idem:peer:${key}`,
      { owner: key, fingerprint: 'f' },
      { now: Date.now(), leaseMs: 30_000, ttlSeconds: 86_400 },
    );
    if (decision.kind !== 'claimed') return decision;
    const outcome = await work();
    await completeRequestKey(`idem:peer:${key}`, key, { fingerprint: 'f', outcome, existing: false }, 86_400);
    return outcome;
  };
  const persistenceStore = new CachePersistenceLayer({ client });
  const lambdaContext = {
    functionName: 'bench',
    awsRequestId: 'bench',
    getRemainingTimeInMillis: () => 30_000,
  } as unknown as import('aws-lambda').Context;
  const makePeer = (executions: { count: number }, withContext: boolean) => {
    const config = new IdempotencyConfig({ eventKeyJmesPath: 'key' });
    if (withContext) config.registerLambdaContext(lambdaContext);
    return makeIdempotent(
      async (event: { key: string }) => {
        executions.count++;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { paid: event.key };
      },
      { persistenceStore, config },
    );
  };

  // Throughput: the same workload (claim, do nothing, store the outcome) on unique keys.
  const instant = async () => ({ ok: true });
  const oursPerSecond = await runPool((i) => ours(`${tag}-t-${i}`, instant));
  const fast = makeIdempotent(async (event: { key: string }) => ({ ok: event.key }), {
    persistenceStore,
    config: (() => {
      const config = new IdempotencyConfig({ eventKeyJmesPath: 'key' });
      config.registerLambdaContext(lambdaContext);
      return config;
    })(),
  });
  const peerPerSecond = await runPool((i) => fast({ key: `${tag}-p-${i}` }));

  // Concurrent duplicates: 20 calls with one key at once, the work takes 50 ms. How many ran it?
  const duplicates = async (call: () => Promise<unknown>) => {
    const settled = await Promise.allSettled(Array.from({ length: 20 }, call));
    return settled.filter((s) => s.status === 'rejected').length;
  };
  const oursRuns = { count: 0 };
  await duplicates(() =>
    ours(`${tag}-dup`, async () => {
      oursRuns.count++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { paid: true };
    }),
  );
  const bare = { count: 0 };
  const bareRejected = await duplicates(() => makePeer(bare, false)({ key: `${tag}-dup-bare` }));
  const withContext = { count: 0 };
  const contextRejected = await duplicates(() => makePeer(withContext, true)({ key: `${tag}-dup-ctx` }));
  await client.quit();
  // Layer 2's client (lib/redis.ts) is done too: it would only log the chaos storm's Redis outage. Forgotten, not
  // only closed: the storm's receipts make a new one.
  (await import('../../../lib/redis.ts')).closeRedis();
  return {
    oursPerSecond,
    peerPerSecond,
    oursRuns: oursRuns.count,
    peerBareRuns: bare.count,
    peerBareRejected: bareRejected,
    peerContextRuns: withContext.count,
    peerContextRejected: contextRejected,
  };
}
