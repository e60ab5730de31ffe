// Runs before every page and server action:
// - gives every browser a session on its first visit, before any page renders, so the checkout page can
//   bind its one-time token to the session on the very first load. API routes are left alone: a service
//   identifies itself with X-Client-Id, and a fresh session minted for each of its calls would make its
//   retries look like strangers' to layer 2;
// - refuses a server action's oversized body with a 413 (Next.js's own limit answers 500).
import { type NextRequest, NextResponse } from 'next/server';
import { problem } from './lib/http/problem.ts';
import { newSessionId, SESSION_COOKIE, SessionIdSchema } from './lib/session.ts';

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

  const current = request.cookies.get(SESSION_COOKIE)?.value;
  if (current && SessionIdSchema.safeParse(current).success) return NextResponse.next();

  const sessionId = newSessionId();
  request.cookies.set(SESSION_COOKIE, sessionId); // visible to this request's render
  const response = NextResponse.next({ request: { headers: request.headers } });
  response.cookies.set(SESSION_COOKIE, sessionId, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: request.nextUrl.protocol === 'https:',
  });
  return response;
}

export const config = {
  // Pages, server actions and the API; not Next's static assets.
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
