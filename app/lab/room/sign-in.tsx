'use client';
import { useTranslations } from 'next-intl';
import { useActionState } from 'react';
import { type PresenterState, signInPresenter } from './actions';

export function PresenterSignIn() {
  const t = useTranslations('lab.room');
  const [state, action, pending] = useActionState<PresenterState, FormData>(signInPresenter, { status: 'idle' });
  return (
    <form action={action} className="card stack">
      <label className="field">
        <span>{t.rich('secret', { code: (chunks) => <code>{chunks}</code> })}</span>
        <input name="secret" type="password" autoComplete="off" required aria-describedby="secret-error" />
      </label>
      <p id="secret-error" role="alert" className="alarm small" data-state={state.status}>
        {state.status === 'wrong' ? t('wrongSecret') : ''}
        {state.status === 'limited' ? t('tooManyTries', { seconds: state.seconds }) : ''}
      </p>
      <button type="submit" className="button" disabled={pending}>
        {t('open')}
      </button>
    </form>
  );
}
