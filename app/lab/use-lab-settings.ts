'use client';
// The lab's settings in a tab, kept in step with the server: a change shows at once and is then written
// (PUT /api/lab/config); the server's answer, or what it holds after a refusal, is what stays. Other tabs'
// changes arrive with the next poll. Every write bumps a generation: a poll that started before the last
// write, or while a write is still on its way (it may read the settings from before it), is stale and
// dropped, so a switch never flickers back.
import { useTranslations } from 'next-intl';
import { useRef, useState } from 'react';
import { type LabSettings, type LabSettingsPatch, mergeLabSettings } from '@/lib/lab/settings';
import { useEvery } from '@/lib/ui/use-polling';

/** Whether every field of `a` has the same value in `b` (one part of the settings against its default). */
export const same = (a: object, b: object) =>
  Object.entries(a).every(([key, value]) => (b as Record<string, unknown>)[key] === value);

export type LabSettingsState = {
  settings: LabSettings;
  /** Why the last change was not saved, in the reader's language. */
  error: string | undefined;
  change: (patch: LabSettingsPatch) => Promise<void>;
  reset: () => Promise<void>;
  /** The room's exercise (the presenter's "for everyone"), and whether this lab follows it (no own changes). */
  room: { exercise?: string; follows: boolean };
  /** Drops this lab's own changes: it follows the room again. */
  follow: () => Promise<void>;
};

/** What a lab's answer says of the room (GET /api/lab/config, POST /api/lab/follow). */
const roomOf = (response: Response) => ({
  exercise: response.headers.get('x-lab-room-exercise') ?? undefined,
  follows: response.headers.get('x-lab-follows-room') !== 'no',
});

/** `global`: the presenter's room edits the global settings; an attendee, their own lab. */
export function useLabSettings(initialSettings: LabSettings, global: boolean): LabSettingsState {
  const t = useTranslations('lab');
  const scope = global ? '?scope=global' : '';
  const [settings, setSettings] = useState<LabSettings>(initialSettings);
  const [error, setError] = useState<string>();
  const [room, setRoom] = useState<LabSettingsState['room']>({ follows: true });
  const generation = useRef(0);
  const writing = useRef(0);

  useEvery(1500, async () => {
    if (writing.current > 0) return;
    const started = generation.current;
    const response = await fetch(`/api/lab/config${scope}`, { cache: 'no-store' });
    const fresh = response.ok ? ((await response.json()) as LabSettings) : undefined;
    // Judged after the body has arrived: a change made while it was read would otherwise be undone.
    if (fresh && started === generation.current && writing.current === 0) {
      setSettings(fresh);
      if (!global) setRoom(roomOf(response));
    }
  });

  const refused = (response: Response | undefined, body: unknown): string => {
    const detail = (body as { detail?: unknown } | undefined)?.detail;
    if (!response) return t('console.notSavedOffline');
    return typeof detail === 'string'
      ? t('console.notSavedBecause', { detail: detail.replace(/\.$/, '') })
      : t('console.notSaved');
  };

  const send = async (url: string, init: RequestInit) => {
    const mine = ++generation.current;
    setError(undefined);
    writing.current += 1;
    const response = await fetch(url, init)
      .catch(() => undefined)
      .finally(() => {
        writing.current -= 1;
      });
    const body = response ? ((await response.json().catch(() => undefined)) as unknown) : undefined;
    // A newer change was made meanwhile (judged after the body has arrived, or a click made while it was
    // read would be undone): its answer, which includes this one, is the one to show.
    if (mine !== generation.current) return;
    generation.current += 1;
    const saved = response?.ok ? (body as LabSettings | undefined) : undefined;
    if (saved) {
      setSettings(saved);
      // A change of my own: this lab no longer follows the room (until I follow it again).
      if (!global) setRoom((current) => ({ ...current, follows: url === '/api/lab/follow' }));
      return;
    }
    setError(refused(response, body));
    // What the server holds now, since the switches showed the change at once.
    const now = await fetch(`/api/lab/config${scope}`, { cache: 'no-store' }).catch(() => undefined);
    if (now?.ok && mine + 1 === generation.current) setSettings((await now.json()) as LabSettings);
  };

  const change = (patch: LabSettingsPatch) => {
    setSettings((current) => mergeLabSettings(current, patch)); // at once; the server's answer follows
    return send(`/api/lab/config${scope}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(patch),
    });
  };
  const reset = () => send(`/api/lab/reset${scope}`, { method: 'POST' });
  const follow = () => send('/api/lab/follow', { method: 'POST' });
  return { settings, error, change, reset, room, follow };
}
