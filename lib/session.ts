// Who is calling: the browser's session (a random id in an httpOnly cookie, set by proxy.ts on the first
// visit) or, for service-to-service calls, the X-Client-Id header. Tokens and request keys are scoped by it.
// The demo takes X-Client-Id at its word; in production it would come from the caller's authentication
// (an API key), which is what makes "one caller can never read another's outcome" hold against liars too.
import { z } from 'zod';

export const SESSION_COOKIE = 'sid';

/** 128 random bits, base64url. */
export const SessionIdSchema = z.string().regex(/^[A-Za-z0-9_-]{22}$/);

export const ClientIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, { message: 'must be 1-64 characters: letters, digits, ".", "_" or "-"' });

export function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Buffer.from(bytes).toString('base64url');
}

/** The caller's scope for Redis keys: `s.<session>` for a browser, `c.<client id>` for an API caller. */
export type CallerScope = `s.${string}` | `c.${string}`;

export function sessionScope(sessionId: string): CallerScope {
  return `s.${sessionId}`;
}

export function clientScope(clientId: string): CallerScope {
  return `c.${clientId}`;
}
