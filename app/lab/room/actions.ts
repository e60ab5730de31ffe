'use server';
import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { env } from '@/lib/env';
import { PRESENTER_COOKIE, presenterToken, same } from '@/lib/http/presenter';

export type PresenterState = { status: 'idle' } | { status: 'wrong' };

/** The presenter gives the lab secret once; the browser then keeps a cookie that proves it (not the secret). */
export async function signInPresenter(_previous: PresenterState, formData: FormData): Promise<PresenterState> {
  const secret = env().LAB_SECRET;
  // Anyone may post an action with arguments of any shape (`[]`, `{"a":1}`): only a form is ours.
  const given = formData instanceof FormData ? formData.get('secret') : null;
  if (!secret || typeof given !== 'string' || !same(given, secret)) return { status: 'wrong' };
  (await cookies()).set(PRESENTER_COOKIE, presenterToken(secret), {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    maxAge: 12 * 3600,
  });
  redirect('/lab/room');
}
