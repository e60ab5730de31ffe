'use client';
import { useActionState } from 'react';
import { type PresenterState, signInPresenter } from './actions';

export function PresenterSignIn() {
  const [state, action, pending] = useActionState<PresenterState, FormData>(signInPresenter, { status: 'idle' });
  return (
    <form action={action} className="card stack">
      <label className="field">
        <span>Lab secret (LAB_SECRET, printed by the demo at start)</span>
        <input name="secret" type="password" autoComplete="off" required aria-describedby="secret-error" />
      </label>
      <p id="secret-error" role="alert" className="alarm small">
        {state.status === 'wrong' ? 'That is not the lab secret.' : ''}
      </p>
      <button type="submit" className="button" disabled={pending}>
        Open the room
      </button>
    </form>
  );
}
