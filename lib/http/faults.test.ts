import { describe, expect, it } from 'vitest';
import { Prisma } from '../generated/prisma/client.ts';
import { faultyService } from './faults.ts';

/** A raw query's failure as Prisma 7 reports it through the pg adapter (seen against a stopped server). */
function rawQueryError(cause: Record<string, string>): Error {
  return new Prisma.PrismaClientKnownRequestError('Raw query failed.', {
    code: 'P2010',
    clientVersion: '7.10.0',
    meta: { driverAdapterError: { name: 'DriverAdapterError', cause } },
  });
}

/** An ioredis error as the production build ships it: minified, so its class name, and its `name`, is "i". */
function minified(message: string): Error {
  const i = class extends Error {
    override get name() {
      return this.constructor.name;
    }
  };
  Object.defineProperty(i, 'name', { value: 'i' });
  return new i(message);
}

describe('faultyService', () => {
  it('names Redis for the errors of a Redis outage, whatever the bundler called their classes', () => {
    for (const message of [
      'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
      'Connection is closed.',
      'Command timed out',
      // Redis full (maxmemory, noeviction): a write refused, also from inside a script (seen against redis 7).
      "OOM command not allowed when used memory > 'maxmemory'.",
      "OOM command not allowed when used memory > 'maxmemory'. script: d8f2fad9, on @user_script:1.",
      // A Redis Cluster: a slot without a primary, a slot moving, no node answering.
      'CLUSTERDOWN The cluster is down',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      'Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down',
      'Failed to refresh slots cache.',
      'None of startup nodes is available',
    ]) {
      const error = minified(message);
      expect(error.name).toBe('i');
      expect(faultyService(error)).toBe('redis');
    }
  });

  it('names the database for node-postgres errors the adapter passes through unwrapped (found by the chaos storm)', () => {
    expect(faultyService(new Error('Connection terminated unexpectedly'))).toBe('database');
    expect(faultyService(new Error('timeout exceeded when trying to connect'))).toBe('database');
    expect(faultyService(new Error('Client has encountered a connection error and is not queryable'))).toBe('database');
    expect(
      faultyService(new Error('Database error. Code: `57P03`. Message: `the database system is shutting down`')),
    ).toBe('database');
    expect(faultyService(new Error('Database error. Code: `23505`. Message: `duplicate key`'))).toBeUndefined();
    // A statement that waited past lock_timeout, or ran past statement_timeout (lib/db.ts): busy, not broken.
    expect(
      faultyService(new Error('Database error. Code: `55P03`. Message: `canceling statement due to lock timeout`')),
    ).toBe('database');
    expect(faultyService(rawQueryError({ kind: 'postgres', originalCode: '57014' }))).toBe('database');
    expect(faultyService(new Error('Connection is closed.'))).toBe('redis');
  });

  it('names the database when a raw query could not reach it, and nothing for a raw query that was refused', () => {
    expect(faultyService(rawQueryError({ kind: 'DatabaseNotReachable' }))).toBe('database');
    expect(faultyService(rawQueryError({ kind: 'ConnectionClosed' }))).toBe('database');
    expect(faultyService(rawQueryError({ kind: 'postgres', originalCode: '57P01' }))).toBe('database');
    expect(faultyService(rawQueryError({ kind: 'UniqueConstraintViolation', originalCode: '23505' }))).toBeUndefined();
    expect(faultyService(rawQueryError({ kind: 'postgres', originalCode: '42601' }))).toBeUndefined();
  });

  it('names the database when an interactive transaction found no free connection in time (seen under a storm of payers)', () => {
    const busy = new Prisma.PrismaClientKnownRequestError(
      'Transaction API error: Unable to start a transaction in the given time.',
      { code: 'P2028', clientVersion: '7.10.0' },
    );
    expect(faultyService(busy)).toBe('database');
  });

  it('names nothing for an error that is not a service outage', () => {
    expect(faultyService(new Error('Cannot read properties of undefined'))).toBeUndefined();
    expect(faultyService('not an error')).toBeUndefined();
  });
});
