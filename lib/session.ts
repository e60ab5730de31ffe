// Who is calling: the browser's session (a signed random id in an httpOnly cookie, set by proxy.ts on the first
// visit) or, for service-to-service calls, the X-Client-Id header. Tokens and request keys are scoped by it.
// The demo takes X-Client-Id at its word; in production it would come from the caller's authentication
// (an API key), which is what makes "one caller can never read another's outcome" hold against liars too.
//
// The one place that knows the session cookie's format: `<id>.<signature>`, the id 128 random bits in
// base64url (22 characters), the signature HMAC-SHA256(secret, id) in base64url (43 characters). A browser
// cannot choose its session (session fixation): an id the server did not sign is no session at all. Pure
// functions, given the secret (lib/session-secret.ts knows where it comes from).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

// No `SESSION_COOKIE` and no id schema any more: a cookie's value is not a session until verified, and its
// name depends on the scheme. Read a request's session with sessionIdOf() (lib/http/session-cookie.ts).

/** The cookie over plain http (the demo on a laptop, a LAN). */
export const HTTP_SESSION_COOKIE = 'sid';
/** The cookie over https: `__Host-` makes the browser refuse it unless Secure, Path=/ and without Domain. */
export const SECURE_SESSION_COOKIE = '__Host-sid';

/** The cookie's name for a request that arrived over https (`secure`) or plain http. */
export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : HTTP_SESSION_COOKIE;
}

const SIGNED = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export const ClientIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, { message: 'must be 1-64 characters: letters, digits, ".", "_" or "-"' });

export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

function signatureOf(sessionId: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(`session:${sessionId}`).digest();
}

/** The cookie's value for a session id: `<id>.<signature>`. */
export function signSessionId(sessionId: string, secret: string): string {
  return `${sessionId}.${signatureOf(sessionId, secret).toString('base64url')}`;
}

/**
 * The session id a cookie value carries, if the server signed it with `secret`; undefined for anything else
 * (unsigned, forged, truncated, signed with another secret, padded, or not a string at all).
 */
export function verifySessionCookie(value: string | undefined | null, secret: string): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = SIGNED.exec(value);
  if (!match) return undefined;
  const [, sessionId = '', signature = ''] = match;
  const given = Buffer.from(signature, 'base64url');
  const expected = signatureOf(sessionId, secret);
  // Constant time, and the exact spelling: base64url has one spelling per 32 bytes only up to its last
  // character's unused bits, so the text is compared too.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return expected.toString('base64url') === signature ? sessionId : undefined;
}

/** A new session: its id and the cookie value that carries it. */
export function newSession(secret: string): { sessionId: string; cookie: string } {
  const sessionId = newSessionId();
  return { sessionId, cookie: signSessionId(sessionId, secret) };
}

/** The caller's scope for Redis keys: `s.<session>` for a browser, `c.<client id>` for an API caller. */
export type CallerScope = `s.${string}` | `c.${string}`;

/** A browser's scope: the session id alone (never the signature, which the lab's timeline could show). */
export function sessionScope(sessionId: string): CallerScope {
  return `s.${sessionId}`;
}

export function clientScope(clientId: string): CallerScope {
  return `c.${clientId}`;
}
