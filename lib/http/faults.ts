// Which service an unexpected error came from, so a route can answer 503 naming it (never a stack trace).
import { Prisma } from '../generated/prisma/client.ts';

export type FaultyService = 'database' | 'redis';

const REDIS_ERRORS =
  /Connection is closed|Command timed out|MaxRetriesPerRequest|ECONNREFUSED.*6\d{3}|Stream isn't writeable|NOSCRIPT|READONLY|LOADING/;

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
  return undefined;
}
