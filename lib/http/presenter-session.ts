import 'server-only';
// The presenter's sessions: who gave the lab secret, and until when. A sign-in makes a random id (256 bits),
// kept in Redis (as its digest: a reader of Redis learns no cookie) with an expiry, and sent as an httpOnly
// cookie, Secure when the room is served over https. The cookie says nothing about the secret (the old one was
// its hash, the same forever and guessable offline); signing out, or PRESENTER_SESSION_SECONDS, ends it on
// the server, whoever holds a copy.
import { createHash, randomBytes } from 'node:crypto';
import { env } from '../env.ts';
import { getRedis } from '../redis.ts';
import { isExposed, same } from './presenter.ts';
import { trySecret } from './rate-limit.ts';
import { arrivedOverHttps } from './session-cookie.ts';

export const PRESENTER_COOKIE = 'lab_presenter';
/** How long a presenter's session lasts: a workshop's day. */
export const PRESENTER_SESSION_SECONDS = 12 * 3600;

const ID = /^[A-Za-z0-9_-]{43}$/;

const keyOf = (id: string) => `lab:presenter:${createHash('sha256').update(id).digest('base64url')}`;

type HeaderSource = { get(name: string): string | null };
type CookieSource = { get(name: string): { value: string } | undefined };

/**
 * Whether this request may act for the room: on loopback everyone; exposed, the secret as Bearer (a try of
 * it, counted: a guesser is refused after the limit, the right secret too) or a live session.
 */
export async function isPresenter(request: { headers: HeaderSource; cookies: CookieSource }): Promise<boolean> {
  if (!isExposed()) return true;
  const secret = env().LAB_SECRET;
  if (!secret) return false;
  const bearer = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
  // A Bearer token is a try of the secret like the sign-in form's, and counted as one (lib/http/rate-limit.ts).
  if (bearer !== undefined && (await trySecret(request.headers, () => same(bearer, secret))) === 'right') return true;
  const id = request.cookies.get(PRESENTER_COOKIE)?.value;
  return id !== undefined && ID.test(id) && (await getRedis().exists(keyOf(id))) === 1;
}

/** The cookie's attributes for this request (Secure over https). */
export function presenterCookie(headers: HeaderSource, maxAge = PRESENTER_SESSION_SECONDS) {
  return { httpOnly: true, sameSite: 'strict', path: '/', maxAge, secure: arrivedOverHttps(headers) } as const;
}

/** A new presenter's session: the cookie's value. */
export async function startPresenterSession(): Promise<string> {
  const id = randomBytes(32).toString('base64url');
  await getRedis().set(keyOf(id), '1', 'EX', PRESENTER_SESSION_SECONDS);
  return id;
}

/** Ends the session this cookie names, on the server: a copy of the cookie opens nothing any more. */
export async function endPresenterSession(id: string | undefined): Promise<void> {
  if (id !== undefined && ID.test(id)) await getRedis().del(keyOf(id));
}
