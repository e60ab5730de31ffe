// The session cookie of a request: which name it goes by (https or not) and the session it proves. Shared
// by proxy.ts (which mints it), the API's caller (lib/http/caller.ts), the checkout page and its action.

import { sessionCookieName, verifySessionCookie } from '../session.ts';
import { sessionSecret } from '../session-secret.ts';

type HeaderSource = { get(name: string): string | null };
type CookieSource = { get(name: string): { value: string } | undefined };

/**
 * Whether the request reached the app over https. Next.js sets X-Forwarded-Proto on every request (from the
 * socket, unless a proxy in front already said), and treats any value containing "https" as https; so does
 * this. A client on plain http that claims https gets a Secure cookie its browser will not send back: it
 * only loses its own session.
 */
export function arrivedOverHttps(headers: HeaderSource): boolean {
  return (headers.get('x-forwarded-proto') ?? '').includes('https');
}

/** The name of the session cookie for this request: `__Host-sid` over https, `sid` over http. */
export function sessionCookieNameFor(headers: HeaderSource): string {
  return sessionCookieName(arrivedOverHttps(headers));
}

/** The session id this request's cookie proves, or undefined (no cookie, or one the server did not sign). */
export function sessionIdOf(cookies: CookieSource, headers: HeaderSource): string | undefined {
  return verifySessionCookie(cookies.get(sessionCookieNameFor(headers))?.value, sessionSecret());
}
