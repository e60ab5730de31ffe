// Gives every browser a session on its first visit, before any page renders, so the checkout page can
// bind its one-time token to the session on the very first load.
import { type NextRequest, NextResponse } from 'next/server';
import { newSessionId, SESSION_COOKIE, SessionIdSchema } from './lib/session.ts';

export function proxy(request: NextRequest): NextResponse {
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
  // Pages and the API; not Next's static assets.
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
