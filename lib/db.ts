import 'server-only';
import { PrismaPg } from '@prisma/adapter-pg';
import { requireEnv } from './env.ts';
import { PrismaClient } from './generated/prisma/client.ts';

export type Db = PrismaClient;

function createPrismaClient(): PrismaClient {
  const adapter = new PrismaPg(
    {
      connectionString: requireEnv('DATABASE_URL'),
      max: 20,
      // Fail fast when PostgreSQL is down instead of queueing requests behind a dead server.
      connectionTimeoutMillis: 3_000,
    },
    {
      // An idle connection dropped by a restarting server is not a reason to crash the app.
      onPoolError: (error) => console.error(`[db] idle connection lost: ${error.message}`),
    },
  );
  return new PrismaClient({ adapter });
}

// One client per process. Outside production, Next's hot reload re-evaluates modules, so the client
// lives on globalThis (create-t3-app's pattern). Created on first use, never at import: `next build`
// imports route modules without a database.
const globalForPrisma = globalThis as unknown as { prisma?: PrismaClient };

export function getDb(): PrismaClient {
  globalForPrisma.prisma ??= createPrismaClient();
  return globalForPrisma.prisma;
}
