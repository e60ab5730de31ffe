import 'server-only';
import { PrismaPg } from '@prisma/adapter-pg';
import { DriverAdapterError } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { prepareValue } from 'pg/lib/utils.js';
import { env, requireEnv } from './env.ts';
import { Prisma, PrismaClient } from './generated/prisma/client.ts';

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

function createPool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: 20,
    // Fail fast when PostgreSQL is down instead of queueing requests behind a dead server.
    connectionTimeoutMillis: 3_000,
    // No statement waits without bound for a row another transaction holds, or runs on: a payment answers 503
    // (the database is busy, retry) rather than hang. The longest wait is then known: 3 s for a connection,
    // 3 s for a lock, 10 s for a statement (retention's batches are the longest, well under it).
    lock_timeout: 3_000,
    statement_timeout: 10_000,
  });
  // An idle connection dropped by a restarting server is not a reason to crash the app.
  pool.on('error', (error) => console.error(`[db] idle connection lost: ${error.message}`));
  countRoundTrips(pool);
  return pool;
}

function createPrismaClient(pool: pg.Pool): PrismaClient {
  return new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    // An interactive transaction (the recovery path's) waits for a connection as long as a statement does:
    // Prisma's own 2 s would give up first when twenty payers find one dead claim at once. Once it runs, it
    // may wait 3 s for its row lock and then run its few statements: Prisma's own 5 s expired under a load
    // of twenty (answered 503); 10 s is the statement's own bound, so a request still answers within it.
    transactionOptions: { maxWait: 3_000, timeout: 10_000 },
  });
}

// One client per process. Outside production, Next's hot reload re-evaluates modules, so the client
// lives on globalThis (create-t3-app's pattern). Created on first use, never at import: `next build`
// imports route modules without a database.
const globalForPrisma = globalThis as unknown as {
  pgPool?: pg.Pool;
  prisma?: PrismaClient;
  bankPrisma?: PrismaClient;
  /** The hot path's statements' names: one map per process, as the pool is (each route's bundle has a copy of this module). */
  preparedNames?: Map<string, string>;
};

/**
 * The merchant's pool: Prisma's client, the hot path's statements and the benchmark's ideal guard share its twenty
 * connections (and, without a database of its own, the simulated bank's books).
 */
export function getPool(): pg.Pool {
  globalForPrisma.pgPool ??= createPool(requireEnv('DATABASE_URL'));
  return globalForPrisma.pgPool;
}

export function getDb(): PrismaClient {
  globalForPrisma.prisma ??= createPrismaClient(getPool());
  return globalForPrisma.prisma;
}

/**
 * The simulated bank's database: its own (BANK_DATABASE_URL), or the merchant's. Only the bank's code
 * (lib/payments/bank*.ts) and the readers of its statement use it, never in a statement with the merchant's tables.
 */
export function getBankDb(): PrismaClient {
  const url = env().BANK_DATABASE_URL;
  if (!url) return getDb();
  globalForPrisma.bankPrisma ??= createPrismaClient(createPool(url));
  return globalForPrisma.bankPrisma;
}

/** Whether the bank keeps its books in a database of its own (BANK_DATABASE_URL). */
export const bankHasOwnDatabase = (): boolean => env().BANK_DATABASE_URL !== undefined;

/** What a statement needs to run: Prisma's client, a transaction of it, or the hot path's runner below. */
export type SqlRunner = { $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): Promise<T> };

/**
 * The hot path's statements (a payment's claim and the record of its outcome): the same raw SQL, sent by
 * node-postgres on the same pool, without Prisma's request pipeline or its adapter around it (the client's
 * pipeline cost about 75 µs of CPU per statement on a 40 µs statement; the adapter's layers, a dozen promises
 * and a copy of every row a payment: decision 037). Values go as node-postgres sends them (a date with its
 * offset: the columns are `timestamptz`), rows come back as it parses them (an int as a number), and an error as
 * the adapter words it (`DriverAdapterError`: a unique violation, a lost server), so that every reader of its errors reads
 * the same thing whichever way a statement went. A payment's two statements are composed once for each shape they
 * take (composeEach, below): a payment then only binds its values, and a value a statement names twice is sent once.
 */
export function hotPath(): HotPath {
  return HOT_PATH;
}

/** The hot path's runner: a statement as a template, or one composed once (`run`, with this run's values). */
export type HotPath = SqlRunner & { run<T, P>(statement: Composed<P>, values: P): Promise<T> };

const HOT_PATH: HotPath = {
  $queryRaw<T>(strings: TemplateStringsArray, ...values: unknown[]): Promise<T> {
    const statement = Prisma.sql(strings, ...values);
    return query<T>(preparedName(statement.text), statement.text, statement.values);
  },
  run<T, P>(statement: Composed<P>, values: P): Promise<T> {
    return query<T>(statement.name, statement.text, statement.bind(values));
  },
};

function query<T>(name: string, text: string, values: unknown[]): Promise<T> {
  // A date as its moment in UTC: node-postgres would write it in the process's time zone, at about 1 µs a date
  // in JavaScript; the columns are `timestamptz`, so both say the same moment.
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value instanceof Date) values[i] = value.toISOString();
  }
  return getPool()
    .query({ name, text, values })
    .then(
      (result) => result.rows as T,
      (error: unknown) => {
        throw asAdapterError(error);
      },
    );
}

const SLOT = Symbol('a value of the statement, by its name');
type Slot = { readonly [SLOT]: string };
/** A composed statement's values, by name, as its text is written: each one the same parameter wherever it appears. */
export type Slots<P> = { readonly [K in keyof P]-?: Slot };

/** A statement whose text is composed once: each run binds only its values. */
export type Composed<P> = { readonly name: string; readonly text: string; bind(values: P): unknown[] };

/**
 * A statement composed once, from a template whose values are named (`${slot.orderNo}`): its text is fixed, a name
 * used twice is one parameter (sent and parsed once), and any other value (a constant) is a parameter of its own,
 * with the same value on every run; a constant PostgreSQL need not bind on every run goes into the text instead
 * (Prisma.raw), unless the planner would weigh it by statistics. Prisma.sql composes it as the others are, once.
 */
export function composeOnce<P>(write: (slots: Slots<P>) => Prisma.Sql): Composed<P> {
  const slots = new Proxy({} as Slots<P>, { get: (_, name) => ({ [SLOT]: String(name) }) });
  const { strings, values } = write(slots);
  const numberOf = new Map<string, number>();
  const bound: Array<{ slot: string } | { constant: unknown }> = [];
  let text = strings[0] ?? '';
  values.forEach((value, i) => {
    const slot = (value as Partial<Slot> | null)?.[SLOT];
    let number = slot === undefined ? undefined : numberOf.get(slot);
    if (number === undefined) {
      // A constant goes as node-postgres would write it on every run, written once (an array's text literal:
      // node-postgres would escape each of its elements again each time).
      number = bound.push(
        slot === undefined ? { constant: Array.isArray(value) ? prepareValue(value) : value } : { slot },
      );
      if (slot !== undefined) numberOf.set(slot, number);
    }
    text += `$${number}${strings[i + 1]}`;
  });
  return {
    name: preparedName(text),
    text,
    bind: (given) => bound.map((one) => ('slot' in one ? (given as Record<string, unknown>)[one.slot] : one.constant)),
  };
}

/** composeOnce for each shape a statement takes (which layers are on, which outcome), each composed when first used. */
export function composeEach<S, P>(
  shapeKey: (shape: S) => string,
  write: (shape: S, slots: Slots<P>) => Prisma.Sql,
): (shape: S) => Composed<P> {
  const composed = new Map<string, Composed<P>>();
  return (shape) => {
    const key = shapeKey(shape);
    let statement = composed.get(key);
    if (!statement) {
      statement = composeOnce((slots: Slots<P>) => write(shape, slots));
      composed.set(key, statement);
    }
    return statement;
  };
}

/**
 * node-postgres's error as the adapter words it (`DriverAdapterError`, its cause's `kind`): PostgreSQL's refusals
 * by their code (a unique violation is `UniqueConstraintViolation`, any other `postgres` with its code and message),
 * a lost server by its socket's error. Anything else (the pool's "timeout exceeded when trying to connect") as it
 * is, as the adapter passes it on.
 */
function asAdapterError(error: unknown): unknown {
  if (error instanceof pg.DatabaseError && error.code !== undefined) {
    const { code, message, severity, detail, column, hint } = error;
    const kind = code === '23505' ? 'UniqueConstraintViolation' : 'postgres';
    const cause = { kind, originalCode: code, originalMessage: message, code, severity, message, detail, column, hint };
    return new DriverAdapterError(cause as DriverAdapterErrorCause);
  }
  const socket = SOCKET_ERRORS[(error as NodeJS.ErrnoException).code ?? ''];
  return socket ? new DriverAdapterError({ kind: socket } as DriverAdapterErrorCause) : error;
}
const SOCKET_ERRORS: Record<string, string> = {
  ENOTFOUND: 'DatabaseNotReachable',
  ECONNREFUSED: 'DatabaseNotReachable',
  ECONNRESET: 'ConnectionClosed',
  ETIMEDOUT: 'SocketTimeout',
};
type DriverAdapterErrorCause = ConstructorParameters<typeof DriverAdapterError>[0];

/**
 * The hot path's statements are prepared: each connection parses and plans a statement once, the first time
 * it runs it, and afterwards only binds its values (PostgreSQL's extended protocol, a named statement). The
 * statements are a handful of fixed texts (a few per combination of the lab's switches), each named by the
 * order it was first seen in; a text beyond the first 64 (there is none) would run unnamed (''), so that
 * no bug can fill the server's memory with statements. The names live beside the pool, on globalThis: two route
 * bundles naming two texts alike would be refused on a connection that prepared one of them.
 */
function preparedName(sql: string): string {
  globalForPrisma.preparedNames ??= new Map();
  const preparedNames = globalForPrisma.preparedNames;
  let name = preparedNames.get(sql);
  if (name === undefined) {
    if (preparedNames.size >= 64) return '';
    name = `hot_${preparedNames.size}`;
    preparedNames.set(sql, name);
  }
  return name;
}
