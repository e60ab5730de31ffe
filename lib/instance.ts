import 'server-only';
// Who this process is: a name (stable across restarts of the same instance) and a boot id (new at every
// start). Attempt ids carry both, so at start-up an instance can tell the claims its previous life left
// behind (dead for sure) from those of another instance that is still running.
import { randomBytes } from 'node:crypto';
import { env } from './env.ts';

const BOOT_ID = randomBytes(4).toString('hex');

export function instanceName(): string {
  return env().INSTANCE_NAME ?? `app-${env().PORT}`;
}

export function bootPrefix(): string {
  return `${instanceName()}.${BOOT_ID}.`;
}

/** A new attempt id: `<instance>.<boot>.<random>`, at most 64 characters. */
export function newAttemptId(): string {
  return `${bootPrefix()}${randomHex(8)}`;
}

/** A request's id: its X-Request-Id, and its span's (the lab's timeline shows it as one lane). */
export function newRequestId(): string {
  return randomHex(6);
}

/**
 * `bytes` random bytes as hex, drawn from a pool filled 6 KiB at a time: one call into the CSPRNG (and
 * through Next.js's wrapper of node:crypto) per several hundred ids instead of one per id, which costs
 * about 10 µs of a payment's CPU each (bench/results.md). The spans' trace and span ids are cut from it too.
 */
export function randomHex(bytes: number): string {
  if (idPoolAt + bytes > idPool.length) {
    idPool = randomBytes(6 * 1_024);
    idPoolAt = 0;
  }
  idPoolAt += bytes;
  return idPool.toString('hex', idPoolAt - bytes, idPoolAt);
}
let idPool = Buffer.alloc(0);
let idPoolAt = 0;
