// Which service an unexpected error came from, so a route can answer 503 naming it (never a stack trace).
import { Prisma } from '../generated/prisma/client.ts';

export type FaultyService = 'database' | 'redis';

// Matched on the message, not the class: the production build minifies ioredis, whose errors take their
// `name` from their class (MaxRetriesPerRequestError is called "i" there).
// A Redis Cluster's own (decision 020): no node answers, the cluster lost a slot's primary, a slot is moving.
const REDIS_ERRORS =
  /Connection is closed|Command timed out|max retries per request limit|MaxRetriesPerRequest|Stream isn't writeable|NOSCRIPT|READONLY|LOADING|^OOM command not allowed|^CLUSTERDOWN|^TRYAGAIN|Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available|Cluster is ended/;

// What the pg adapter calls an unreachable or lost server. A model query reports these as P1001/P1008/
// P1017; a raw query ($queryRaw, used on the hot path) as P2010 carrying the adapter's error.
const UNREACHABLE = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'TlsConnectionError',
]);

function rawQueryLostTheDatabase(error: Prisma.PrismaClientKnownRequestError): boolean {
  if (error.code !== 'P2010') return false;
  const cause = (
    error.meta as { driverAdapterError?: { cause?: { kind?: string; originalCode?: string; message?: string } } }
  )?.driverAdapterError?.cause;
  if (!cause)
    return /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/.test(error.message);
  if (cause.kind && UNREACHABLE.has(cause.kind)) return true;
  // PostgreSQL shutting down (57P01-57P03), a connection exception (class 08), or a statement that waited past
  // lock_timeout (55P03) or ran past statement_timeout (57014): the database cannot serve this request now.
  if (cause.kind === 'postgres' && /^(57P0[1-3]|08|55P03|57014)/.test(cause.originalCode ?? '')) return true;
  return (
    cause.kind === 'GenericJs' &&
    /Connection terminated|timeout exceeded when trying to connect|ECONNREFUSED/.test(error.message)
  );
}

export function faultyService(error: unknown): FaultyService | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error instanceof Prisma.PrismaClientKnownRequestError && rawQueryLostTheDatabase(error)) return 'database';
  // No connection came free in time for an interactive transaction (the pool is busy: a storm of payers on
  // the recovery path): the database cannot serve this request now, and nothing was written.
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2028') return 'database';
  if (
    error instanceof Prisma.PrismaClientInitializationError ||
    error instanceof Prisma.PrismaClientRustPanicError ||
    (error instanceof Prisma.PrismaClientKnownRequestError && /^P1\d{3}$/.test(error.code)) ||
    error instanceof Prisma.PrismaClientUnknownRequestError ||
    error.name === 'DriverAdapterError'
  ) {
    return 'database';
  }
  // node-postgres's own errors, passed through unwrapped by the adapter (an interactive transaction whose
  // connection died with the server, or could not get one).
  if (
    /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/.test(
      error.message,
    )
  ) {
    return 'database';
  }
  // PostgreSQL refusing or shutting down (57P01-57P03) or a connection exception (class 08), as Prisma words
  // an interactive transaction's failure: "Database error. Code: `57P03`. Message: ...".
  if (/Database error\. Code: `(57P0[1-3]|08[0-9A-Z]{3}|55P03|57014)`/.test(error.message)) return 'database';
  if (error.name === 'MaxRetriesPerRequestError' || REDIS_ERRORS.test(error.message)) return 'redis';
  // A bare refused connection: the database's errors arrive wrapped by Prisma (above), so this is Redis.
  if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') return 'redis';
  return undefined;
}
