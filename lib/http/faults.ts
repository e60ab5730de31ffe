// Which service an unexpected error came from, so a route can answer 503 naming it (never a stack trace).
import { Prisma } from '../generated/prisma/client.ts';

export type FaultyService = 'database' | 'redis';

// Matched on the message, not the class: the production build minifies ioredis, whose errors take their
// `name` from their class (MaxRetriesPerRequestError is called "i" there).
const REDIS_ERRORS =
  /Connection is closed|Command timed out|max retries per request limit|MaxRetriesPerRequest|Stream isn't writeable|NOSCRIPT|READONLY|LOADING/;

export function faultyService(error: unknown): FaultyService | undefined {
  if (!(error instanceof Error)) return undefined;
  if (
    error instanceof Prisma.PrismaClientInitializationError ||
    error instanceof Prisma.PrismaClientRustPanicError ||
    (error instanceof Prisma.PrismaClientKnownRequestError && /^P1\d{3}$/.test(error.code)) ||
    error instanceof Prisma.PrismaClientUnknownRequestError ||
    error.name === 'DriverAdapterError'
  ) {
    return 'database';
  }
  if (error.name === 'MaxRetriesPerRequestError' || REDIS_ERRORS.test(error.message)) return 'redis';
  // A bare refused connection: the database's errors arrive wrapped by Prisma (above), so this is Redis.
  if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') return 'redis';
  return undefined;
}
