// Who is calling: the browser's session (a signed random id in an httpOnly cookie, set by proxy.ts on the first
// visit) or, for service-to-service calls, the X-Client-Id header. Tokens and request keys are scoped by it.
// The demo takes X-Client-Id at its word; in production it would come from the caller's authentication
// (an API key), which is what makes "one caller can never read another's outcome" hold against liars too.
//
// The one place that knows the session cookie's format: `<id>.<issued>.<signature>`, the id 128 random bits in
// base64url (22 characters), when it was signed (seconds since 1970, base 36), and HMAC-SHA256(secret, both) in
// base64url (43 characters). A browser cannot choose its session (session fixation): an id the server did not
// sign is no session at all. Nor can it keep one for ever: a cookie signed more than SESSION_MAX_AGE_SECONDS
// ago is none either (proxy.ts signs a page load's session again once a day, so an active one lives on). Pure
// functions, given the secret (lib/session-secret.ts knows where it comes from) and the time.
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

const SIGNED = /^([A-Za-z0-9_-]{22})\.([0-9a-z]{1,8})\.([A-Za-z0-9_-]{43})$/;

/** A session unused (no page loaded) this long is over, on the server, whatever the browser keeps. */
export const SESSION_MAX_AGE_SECONDS = 7 * 86_400;
/** A page load signs its session again once its cookie is this old. */
export const SESSION_RENEW_AFTER_SECONDS = 86_400;
/** A clock a little ahead on another instance: a cookie signed this far in the future still holds. */
const CLOCK_SKEW_SECONDS = 60;

export const ClientIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, { message: 'must be 1-64 characters: letters, digits, ".", "_" or "-"' });

export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

function signatureOf(sessionId: string, issued: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(`session:${sessionId}:${issued}`).digest();
}

const nowInSeconds = () => Math.floor(Date.now() / 1000);

/** The cookie's value for a session id signed at `issuedAt` (seconds; now by default): `<id>.<issued>.<signature>`. */
export function signSessionId(sessionId: string, secret: string, issuedAt: number = nowInSeconds()): string {
  const issued = issuedAt.toString(36);
  return `${sessionId}.${issued}.${signatureOf(sessionId, issued, secret).toString('base64url')}`;
}

/**
 * The session a cookie value carries, and when it was signed, if the server signed it with `secret` within
 * SESSION_MAX_AGE_SECONDS of `now`; undefined for anything else (unsigned, forged, truncated, signed with
 * another secret, padded, too old, or not a string at all).
 */
export function readSessionCookie(
  value: string | undefined | null,
  secret: string,
  now: number = nowInSeconds(),
): { sessionId: string; issuedAt: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const match = SIGNED.exec(value);
  if (!match) return undefined;
  const [, sessionId = '', issued = '', signature = ''] = match;
  const given = Buffer.from(signature, 'base64url');
  const expected = signatureOf(sessionId, issued, secret);
  // Constant time, and the exact spelling: base64url has one spelling per 32 bytes only up to its last
  // character's unused bits, so the text is compared too (and the time's: one spelling, no leading zero).
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  if (expected.toString('base64url') !== signature) return undefined;
  const issuedAt = Number.parseInt(issued, 36);
  if (issuedAt.toString(36) !== issued) return undefined;
  const age = now - issuedAt;
  return age <= SESSION_MAX_AGE_SECONDS && age >= -CLOCK_SKEW_SECONDS ? { sessionId, issuedAt } : undefined;
}

/** The session id a cookie value carries, if the server signed it with `secret` and it has not expired. */
export function verifySessionCookie(value: string | undefined | null, secret: string): string | undefined {
  return readSessionCookie(value, secret)?.sessionId;
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
