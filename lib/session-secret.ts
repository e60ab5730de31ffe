// The key that signs session ids. SESSION_SECRET when set (`npm run demo` keeps one in its data folder and
// passes it to every instance, so a session survives a restart and works on both instances of the cluster);
// otherwise a key made for this process, announced once, and sessions end when the process does.
import { randomBytes } from 'node:crypto';
import { env } from './env.ts';

// On globalThis: proxy.ts, the route handlers and the pages are separate bundles in one process, and must
// all sign and verify with the same key.
const KEY = Symbol.for('pay-once.session-secret');
type Holder = { [KEY]?: string };

export function sessionSecret(): string {
  const configured = env().SESSION_SECRET;
  if (configured) return configured;
  const holder = globalThis as Holder;
  if (!holder[KEY]) {
    holder[KEY] = randomBytes(32).toString('base64url');
    console.warn(
      '[session] SESSION_SECRET is not set: sessions are signed with a key made for this process, and end when it stops',
    );
  }
  return holder[KEY];
}
