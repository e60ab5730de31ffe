// The edge: runs before every page and server action, not before the API (see `config` below). In order:
//   1. Host: only a name this app serves (DNS rebinding) → 421
//   2. Path: a segment that does not decode → 400 (Next.js would answer a bare 500 after this function)
//   3. A form post (server action): exposed to a room, with a session (400); from this site (403), at most
//      16 KiB (413), a body Next.js can parse (400); any other post to a page: at most 16 KiB (413)
//   4. Session: a cookie the server signed in the last week, or on a page load a fresh one (a chosen, forged
//      or expired one is replaced); a day-old one is signed again
//   5. Content-Security-Policy with a fresh nonce; Next.js puts it on the scripts it writes into the page
// API routes are left alone: a service identifies itself with X-Client-Id, and a fresh session minted for each
// of its calls would make its retries look like strangers' to layer 2; and a route reads its own body, so a
// 10 MB body is refused after 16 KiB instead of being buffered here first (lib/http/body.ts).
import { type NextRequest, NextResponse } from 'next/server';
import {
  MAX_FORM_BYTES,
  malformedActionBody,
  mayBeServerAction,
  NO_CONTENT_SECURITY_POLICY,
  newNonce,
  pageContentSecurityPolicy,
  pathDecodes,
  readAtMost,
  sameOrigin,
} from './lib/http/edge.ts';
import { hostAllowed } from './lib/http/hosts.ts';
import { isExposed } from './lib/http/presenter.ts';
import { problem } from './lib/http/problem.ts';
import type { ProblemType } from './lib/http/problem-types.ts';
import { arrivedOverHttps, sessionCookieNameFor, sessionIdOf } from './lib/http/session-cookie.ts';
import { newSession, readSessionCookie, SESSION_RENEW_AFTER_SECONDS, signSessionId } from './lib/session.ts';
import { sessionSecret } from './lib/session-secret.ts';

export async function proxy(request: NextRequest): Promise<Response> {
  // 1. Host.
  const host = request.headers.get('host');
  if (!hostAllowed(host)) {
    return refuse(
      421,
      'host-not-allowed',
      'Host not served here',
      `This server does not answer for ${host ?? 'no host'}.`,
    );
  }
  // 2. The raw path (nextUrl keeps the percent-escapes as they came).
  const path = request.nextUrl.pathname;
  if (!pathDecodes(path)) {
    return refuse(400, 'bad-path', 'Malformed address', 'The path is not valid percent-encoded UTF-8.');
  }
  // An API path only comes here when it holds a '%' (config.matcher): its encoding is checked, the rest is the route's.
  if (isApi(path)) return NextResponse.next();

  // 3. Bodies.
  const refused = await checkBody(request);
  if (refused) return refused;

  // 4. The session: on a page load without one, or with a cookie the server did not sign (chosen by the
  //    client: session fixation), a fresh one, which this render sees at once. Not on a form post: Next.js
  //    would hand a cookie set here to the action too, which must instead find no session (it came with none).
  //    A session signed more than a day ago is signed again with the same id: it expires a week after its last
  //    page load (lib/session.ts), not while in use.
  let minted: { name: string; cookie: string } | undefined;
  if (request.method === 'GET' || request.method === 'HEAD') {
    const name = sessionCookieNameFor(request.headers);
    const current = readSessionCookie(request.cookies.get(name)?.value, sessionSecret());
    if (!current) minted = { name, cookie: newSession(sessionSecret()).cookie };
    else if (Date.now() / 1000 - current.issuedAt > SESSION_RENEW_AFTER_SECONDS) {
      minted = { name, cookie: signSessionId(current.sessionId, sessionSecret()) };
    }
    if (minted) request.cookies.set(minted.name, minted.cookie);
  }
  // 5. The Content-Security-Policy, on the response and on the request Next.js renders (it reads the nonce there).
  const policy = pageContentSecurityPolicy(newNonce());
  const headers = new Headers(request.headers);
  headers.set('content-security-policy', policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set('content-security-policy', policy);
  if (minted) {
    response.cookies.set(minted.name, minted.cookie, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: arrivedOverHttps(request.headers),
    });
  }
  return response;
}

/** Under /api/ but not the API reference's page (app/api/docs/page.tsx). */
function isApi(path: string): boolean {
  const decoded = decodeURIComponent(path);
  return decoded.startsWith('/api/') && decoded !== '/api/docs';
}

async function checkBody(request: NextRequest): Promise<Response | undefined> {
  const { method, headers } = request;
  if (method === 'GET' || method === 'HEAD') return undefined;
  const action = mayBeServerAction(method, headers);
  // Exposed to a room, every action is someone's: one without a session would make an order nobody owns.
  if (action && isExposed() && !sessionIdOf(request.cookies, headers)) {
    return refuse(
      400,
      'missing-caller',
      'Who is calling?',
      'A form of this site is posted with the session cookie its page load gave: reload the page.',
    );
  }
  // Before Next.js does: it would refuse with a 500 (and it compares with X-Forwarded-Host, which a client sets).
  if (action && !sameOrigin(headers.get('origin'), headers.get('host'))) {
    return refuse(403, 'cross-origin', 'Form posted from another site', 'The form did not come from this site.');
  }
  const declared = headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_FORM_BYTES) return tooLarge();
  // A declared small body that is no action is the page's (it renders): nothing to read. A chunked one is
  // counted; an action's is parsed. The body here is Next.js's copy for the proxy (next.config.ts bounds it).
  if (!action && declared !== null) return undefined;
  const body = await readAtMost(request.body, MAX_FORM_BYTES);
  if (body.over) return tooLarge();
  if (!action) return undefined;
  const malformed = await malformedActionBody(
    headers.get('content-type') ?? '',
    body.bytes,
    headers.has('next-action'),
  );
  return malformed ? refuse(400, 'malformed-action', 'Malformed form post', malformed) : undefined;
}

function tooLarge(): Response {
  return refuse(413, 'body-too-large', 'Request body too large', `The form must be at most ${MAX_FORM_BYTES} bytes.`, {
    // Nothing more of this connection is wanted: Node.js closes it instead of reading on to the next request.
    connection: 'close',
  });
}

/** A refusal before anything ran: a problem, with nothing in it to run or frame. */
function refuse(
  status: number,
  type: ProblemType,
  title: string,
  detail: string,
  headers: Record<string, string> = {},
): Response {
  return problem(
    status,
    type,
    title,
    { detail },
    { 'content-security-policy': NO_CONTENT_SECURITY_POLICY, ...headers },
  );
}

export const config = {
  matcher: [
    // Pages and server actions; not the API, nor Next's static assets.
    '/((?!api/|_next/static|_next/image|favicon.ico).*)',
    // The API reference is a page.
    '/api/docs',
    // An API path with a '%' in it: Next.js answers an undecodable one itself, in HTML (the encoding is
    // checked at step 2). Order numbers and every other API path never hold one.
    '/api/:rest(.*%.*)',
  ],
};
