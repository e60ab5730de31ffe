// Runs before every page and server action:
// - gives every browser a session on its first visit, before any page renders, so the checkout page can
//   bind its one-time token to the session on the very first load. API routes are left alone: a service
//   identifies itself with X-Client-Id, and a fresh session minted for each of its calls would make its
//   retries look like strangers' to layer 2;
// - refuses a server action's oversized body with a 413 (Next.js's own limit answers 500).
import { type NextRequest, NextResponse } from 'next/server';
import { problem } from './lib/http/problem.ts';
import { arrivedOverHttps, sessionCookieNameFor, sessionIdOf } from './lib/http/session-cookie.ts';
import { newSession } from './lib/session.ts';
import { sessionSecret } from './lib/session-secret.ts';

/** next.config.ts: serverActions.bodySizeLimit. */
const MAX_ACTION_BYTES = 16 * 1024;

export function proxy(request: NextRequest): Response {
  if (request.method === 'POST' && request.headers.has('next-action')) {
    const declared = Number(request.headers.get('content-length') ?? '0');
    if (declared > MAX_ACTION_BYTES) {
      return problem(413, 'body-too-large', 'Request body too large', {
        detail: `The form must be at most ${MAX_ACTION_BYTES} bytes.`,
      });
    }
  }
  if (request.nextUrl.pathname.startsWith('/api/')) return NextResponse.next();

  if (sessionIdOf(request.cookies, request.headers)) return NextResponse.next();

  // No session, or a cookie the server did not sign (chosen by the client: session fixation): a fresh one.
  // A page load renders with it at once; a form post (a server action) does not: it came with no session.
  const name = sessionCookieNameFor(request.headers);
  const { cookie } = newSession(sessionSecret());
  if (request.method === 'GET' || request.method === 'HEAD') request.cookies.set(name, cookie);
  const response = NextResponse.next({ request: { headers: request.headers } });
  response.cookies.set(name, cookie, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: arrivedOverHttps(request.headers),
  });
  return response;
}

export const config = {
  // Pages, server actions and the API; not Next's static assets.
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
