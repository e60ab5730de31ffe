'use server';
import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { env } from '@/lib/env';
import { same } from '@/lib/http/presenter';
import {
  endPresenterSession,
  PRESENTER_COOKIE,
  presenterCookie,
  startPresenterSession,
} from '@/lib/http/presenter-session';
import { trySecret } from '@/lib/http/rate-limit';

export type PresenterState = { status: 'idle' } | { status: 'wrong' } | { status: 'limited'; seconds: number };

/**
 * The presenter gives the lab secret once; the browser then keeps a session that proves it (not the secret),
 * which ends on the server after a day's workshop or at sign-out. Every try counts (lib/http/rate-limit.ts).
 */
export async function signInPresenter(_previous: PresenterState, formData: FormData): Promise<PresenterState> {
  const secret = env().LAB_SECRET;
  // Anyone may post an action with arguments of any shape (`[]`, `{"a":1}`): only a form is ours.
  const given = formData instanceof FormData ? formData.get('secret') : null;
  if (!secret || typeof given !== 'string') return { status: 'wrong' };
  const requestHeaders = await headers();
  const tried = await trySecret(requestHeaders, () => same(given, secret));
  if (tried === 'wrong') return { status: 'wrong' };
  if (tried !== 'right') return { status: 'limited', seconds: Number(tried.limited.headers.get('retry-after') ?? 60) };
  (await cookies()).set(PRESENTER_COOKIE, await startPresenterSession(), presenterCookie(requestHeaders));
  redirect('/lab/room');
}

/** Ends the presenter's session on the server, and forgets its cookie. */
export async function signOutPresenter(): Promise<never> {
  const jar = await cookies();
  await endPresenterSession(jar.get(PRESENTER_COOKIE)?.value);
  jar.set(PRESENTER_COOKIE, '', presenterCookie(await headers(), 0));
  redirect('/lab/room');
}
