import 'server-only';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { env, requireEnv } from './env.ts';
import { PrismaClient } from './generated/prisma/client.ts';

export type Db = PrismaClient;

/**
 * Database round trips since start (every statement, BEGIN and COMMIT included); counted for `npm run bench`.
 * On globalThis because Next bundles each route on its own: a module-level counter would exist once per route.
 */
const globalForCount = globalThis as unknown as { databaseRoundTrips?: { count: number } };
globalForCount.databaseRoundTrips ??= { count: 0 };
export const databaseRoundTrips = globalForCount.databaseRoundTrips;

/** With the benchmark's routes on, counts every query sent on the pool's connections. */
export function countRoundTrips(pool: pg.Pool): void {
  if (!env().BENCH_ROUTES) return;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: typeof query }).query = (...args: unknown[]) => {
      databaseRoundTrips.count++;
      return query(...args);
    };
  });
}

function createPrismaClient(): PrismaClient {
  const pool = new pg.Pool({
    connectionString: requireEnv('DATABASE_URL'),
    max: 20,
    // Fail fast when PostgreSQL is down instead of queueing requests behind a dead server.
    connectionTimeoutMillis: 3_000,
  });
  // An idle connection dropped by a restarting server is not a reason to crash the app.
  pool.on('error', (error) => console.error(`[db] idle connection lost: ${error.message}`));
  countRoundTrips(pool);
  return new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    // An interactive transaction (the recovery path's) waits for a connection as long as a statement does:
    // Prisma's own 2 s would give up first when twenty payers find one dead claim at once.
    transactionOptions: { maxWait: 3_000 },
  });
}

// One client per process. Outside production, Next's hot reload re-evaluates modules, so the client
// lives on globalThis (create-t3-app's pattern). Created on first use, never at import: `next build`
// imports route modules without a database.
const globalForPrisma = globalThis as unknown as { prisma?: PrismaClient };

export function getDb(): PrismaClient {
  globalForPrisma.prisma ??= createPrismaClient();
  return globalForPrisma.prisma;
}
