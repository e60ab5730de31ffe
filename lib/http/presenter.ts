// Who may act for the whole room. On loopback (the default) the demo is one person's: everyone is the
// presenter, as before. Exposed to a network (HOST is not a loopback address), the room's actions (the
// global settings, the reset of them, deleting the timeline, the room view, and the fault that stops the
// receipt worker for everybody) need LAB_SECRET: `Authorization: Bearer <secret>`, or the presenter's cookie that
// /lab/room sets once the secret was given (lib/http/presenter-session.ts). Without a LAB_SECRET, an exposed app
// refuses them all.
import { createHash, timingSafeEqual } from 'node:crypto';
import { env } from '../env.ts';
import { type LabSettingsPatch, SHARED_FAULTS } from '../lab/settings.ts';
import { problem, say } from './problem.ts';

/** Whether HOST exposes the app beyond this machine. */
export function isExposed(host: string = env().HOST): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  return !(name === 'localhost' || name === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name));
}

/**
 * Whether a given secret (or token) is the expected one, in time that depends on neither: their digests are
 * compared, which have one length (timingSafeEqual needs equal lengths; returning early on a length mismatch
 * told a guesser the secret's length).
 */
export function same(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The presenter's actions a 401 names (messages/<locale>/problems.json presenterActions). */
export type PresenterAction =
  | 'stopTheApp'
  | 'changeGlobalLab'
  | 'readEveryonesTimeline'
  | 'deleteTimeline'
  | 'resetGlobalLab'
  | 'steerRoom';

/** 401 (no or wrong secret) for an action of the room's presenter. */
export function presenterOnly(action: PresenterAction): Response {
  return problem(
    401,
    'presenter-only',
    'The presenter’s action',
    {
      detail: say('details.presenterOnly', { action: say(`presenterActions.${action}`) }),
    },
    { 'www-authenticate': 'Bearer realm="lab"' },
  );
}

/**
 * The faults that stop a process for everybody (the receipt worker: lib/lab/settings.ts SHARED_FAULTS): when
 * exposed, only the presenter may switch them on.
 */
export function sharedFaultsIn(patch: LabSettingsPatch | undefined): boolean {
  return SHARED_FAULTS.some((fault) => Boolean(patch?.faults?.[fault]));
}
