'use client';
import '@/lib/ui/zod-without-eval'; // before zod is used: the page's CSP forbids eval
import { useRouter } from 'next/navigation';
import { useTranslations } from 'next-intl';
import { useState } from 'react';
import { EXERCISES } from '@/lib/lab/exercises';

/**
 * The presenter steers the room: one exercise set up for everyone (every attendee who follows the room is moved
 * at once; the others are told), and the room's reset (its lanes, counts, global lab and gateway).
 */
export function RoomSteering({ current }: { current?: string }) {
  const t = useTranslations('lab');
  const router = useRouter();
  const [chosen, setChosen] = useState(current ?? EXERCISES[0]?.id ?? '1');
  const [failed, setFailed] = useState(false);
  const post = async (url: string, body?: unknown) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch(() => undefined);
    setFailed(!response?.ok);
    router.refresh();
  };
  return (
    <section className="card row" aria-labelledby="steer-title">
      <h2 id="steer-title">{t('room.steerTitle')}</h2>
      <label htmlFor="room-exercise">{t('console.exercise')}</label>
      <select id="room-exercise" value={chosen} onChange={(event) => setChosen(event.target.value)}>
        {EXERCISES.map((exercise) => (
          <option key={exercise.id} value={exercise.id}>
            {exercise.id}
          </option>
        ))}
      </select>
      <button type="button" className="button" onClick={() => post('/api/lab/room/exercise', { exercise: chosen })}>
        {t('room.setUpForEveryone', { id: chosen })}
      </button>
      <button type="button" className="button secondary" onClick={() => post('/api/lab/room/reset')}>
        {t('room.resetRoom')}
      </button>
      {failed ? (
        <p role="alert" className="alarm">
          {t('room.steerFailed')}
        </p>
      ) : null}
    </section>
  );
}
