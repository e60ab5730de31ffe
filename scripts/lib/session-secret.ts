// The demo's session secret, when SESSION_SECRET is not set: made on the first start, kept in the data
// folder (readable by its owner only) and passed to every app instance, so that sessions survive a restart
// and the cluster's two instances accept each other's cookies.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** At least 32 characters, as lib/env.ts requires of SESSION_SECRET. */
const MIN_LENGTH = 32;

export function loadOrCreateSessionSecret(file: string): { secret: string; created: boolean } {
  try {
    const secret = readFileSync(file, 'utf8').trim();
    if (secret.length < MIN_LENGTH) {
      throw new Error(
        `${file}: the session secret must be at least ${MIN_LENGTH} characters (delete the file to make a new one)`,
      );
    }
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return { secret, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  // `wx`: two launchers starting at once must not overwrite each other's secret (the second one fails loudly).
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return { secret, created: true };
}
