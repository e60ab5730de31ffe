'use client';
import '@/lib/ui/zod-without-eval'; // before zod is used: the page's CSP forbids eval
import { useTranslations } from 'next-intl';
import { type ReactNode, useEffect, useState } from 'react';
import { EXERCISES, exerciseMatching, exerciseSettings, findExercise } from '@/lib/lab/exercises';
import { colourOf, SWITCHES } from '@/lib/lab/layer-info';
import { DEFAULT_LAB_SETTINGS, type LabSettings } from '@/lib/lab/settings';
import styles from './lab.module.css';
import { AnswersGroup, ClaimsGroup, FaultsGroup, GatewayGroup, KeyStrategyGroup, LatencyField } from './lab-fields';
import { type StoredEvent, Timeline } from './timeline';
import { type LabSettingsState, same, useLabSettings } from './use-lab-settings';

type Props = {
  initialSettings: LabSettings;
  initialEvents: StoredEvent[];
  bankTimeoutMs: number;
  settlementWindowMs: number;
  /** `mine`: an attendee's own lab and lanes (the default); `room`: the presenter's global settings and everyone's lanes. */
  scope?: 'mine' | 'room';
  /** The page's heading, at the start of the toolbar. */
  heading?: ReactNode;
  /** `?exercise=3`: the exercise the preset control offers first (shown, never applied by loading the page). */
  initialExercise?: string;
  /** `?order=ord_…`: the timeline's order filter. */
  initialOrder?: string;
  /** `?client=<id>`: the timeline shows that X-Client-Id's lanes (the guide's commands) instead of this browser's. */
  client?: string;
};

/** An exercise's title in the reader's language (lab.exercises.<id>), else the list's English one. */
function useExerciseTitle() {
  const t = useTranslations('lab');
  return (option: { id: string; title: string }) =>
    t.has(`exercises.${option.id}` as 'exercises.1') ? t(`exercises.${option.id}` as 'exercises.1') : option.title;
}

export function LabConsole(props: Props) {
  const { initialEvents, scope = 'mine', initialOrder, client } = props;
  const lab = useLabSettings(props.initialSettings, scope === 'room');
  // Until React has hydrated the page, a click would flip a box that React then flips back: keep them disabled.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return (
    <div className={styles.console}>
      <Toolbar lab={lab} hydrated={hydrated} heading={props.heading} initialExercise={props.initialExercise} />
      {scope === 'mine' ? <RoomNotice lab={lab} hydrated={hydrated} /> : null}
      <div className={styles.columns}>
        <section className={styles.panel} aria-labelledby="switches-title">
          <Defences lab={lab} hydrated={hydrated} />
          <LatencyField lab={lab} hydrated={hydrated} bankTimeoutMs={props.bankTimeoutMs} />
          <KeyStrategyGroup lab={lab} hydrated={hydrated} />
          <AnswersGroup lab={lab} hydrated={hydrated} />
          <FaultsGroup lab={lab} hydrated={hydrated} settlementWindowMs={props.settlementWindowMs} />
          <ClaimsGroup lab={lab} hydrated={hydrated} />
          <GatewayGroup lab={lab} hydrated={hydrated} />
        </section>
        <Timeline initialEvents={initialEvents} scope={scope} initialFilter={initialOrder} client={client} />
      </div>
    </div>
  );
}

/**
 * The presenter's exercise for everyone, as this lab lives it: followed (no changes of my own), or not, with
 * the button that follows it (my own changes dropped).
 */
function RoomNotice({ lab, hydrated }: { lab: LabSettingsState; hydrated: boolean }) {
  const t = useTranslations('lab');
  const { exercise, follows } = lab.room;
  if (!exercise) return null;
  return (
    <p className={styles.current} role="status" data-testid="room-notice" data-follows={follows ? 'yes' : 'no'}>
      {follows ? t('console.roomFollowing', { id: exercise }) : t('console.roomNotFollowing', { id: exercise })}{' '}
      {follows ? null : (
        <button type="button" className="button" onClick={() => lab.follow()} disabled={!hydrated}>
          {t('console.followRoom', { id: exercise })}
        </button>
      )}
    </p>
  );
}

/** The exercise presets (the guide's "Break it" lab for each, applied as one whole write), reset, a new checkout. */
function Toolbar({
  lab,
  hydrated,
  heading,
  initialExercise,
}: {
  lab: LabSettingsState;
  hydrated: boolean;
  heading?: ReactNode;
  initialExercise?: string;
}) {
  const t = useTranslations('lab');
  const titleOf = useExerciseTitle();
  const matching = exerciseMatching(lab.settings);
  const [chosen, setChosen] = useState(
    () => findExercise(initialExercise ?? '')?.id ?? matching?.id ?? EXERCISES[0]?.id ?? '1',
  );
  // Until the reader picks one, the list shows the exercise the switches are, or else the one this browser set up
  // last: `/lab?order=…` after exercise 4's "Fix it" (custom switches) showed exercise 1 (issue 29, item 10).
  const [picked, setPicked] = useState(initialExercise !== undefined);
  const matchingId = matching?.id;
  useEffect(() => {
    if (picked || !hydrated) return;
    const last = findExercise(readLastExercise() ?? '')?.id;
    if (matchingId ?? last) setChosen((matchingId ?? last) as string);
    setPicked(true); // once: from then on the list is the reader's
  }, [picked, hydrated, matchingId]);
  const exercise = findExercise(chosen);
  // The whole settings, the gateway's included (its defaults are what exercise 10 describes): nothing set
  // before, for another exercise, lingers.
  const setUp = () => {
    if (!exercise) return;
    rememberLastExercise(exercise.id);
    lab.change(exerciseSettings(exercise));
  };
  return (
    <div className={styles.toolbar}>
      {heading}
      <div className={styles.preset}>
        <label htmlFor="exercise">{t('console.exercise')}</label>
        <select
          id="exercise"
          value={chosen}
          onChange={(event) => {
            setPicked(true);
            setChosen(event.target.value);
          }}
        >
          {EXERCISES.map((option) => (
            <option key={option.id} value={option.id}>
              {option.audience === 'presenter'
                ? t('console.exerciseOptionPresenter', {
                    option: t('console.exerciseOption', { id: option.id, title: titleOf(option) }),
                  })
                : t('console.exerciseOption', { id: option.id, title: titleOf(option) })}
            </option>
          ))}
        </select>
        <button type="button" className="button" onClick={setUp} disabled={!hydrated || !exercise}>
          {t('console.setUp', { id: chosen })}
        </button>
      </div>
      <div className={styles.toolbarEnd}>
        <button type="button" className="button secondary" onClick={lab.reset} disabled={!hydrated}>
          {t('console.reset')}
        </button>
        <a className="button secondary" href="/" target="_blank" rel="noreferrer">
          {t('console.newCheckout')}
        </a>
      </div>
      <p role="alert" className={styles.alarm}>
        {lab.error ?? ''}
      </p>
    </div>
  );
}

/** The five switches (and layer 0's), and which exercise the settings are exactly. */
function Defences({ lab, hydrated }: { lab: LabSettingsState; hydrated: boolean }) {
  const t = useTranslations('lab');
  const tl = useTranslations('layers');
  const titleOf = useExerciseTitle();
  const { settings, change } = lab;
  const matching = exerciseMatching(settings);
  const isDefault = (['layers', 'faults', 'claims', 'keys', 'answers'] as const).every((part) =>
    same(DEFAULT_LAB_SETTINGS[part], settings[part]),
  );
  return (
    <>
      <h2 id="switches-title">{t('console.defences')}</h2>
      <p className={styles.current} aria-live="polite" data-exercise={matching?.id}>
        {matching
          ? t('console.setUpExercise', { id: matching.id, title: titleOf(matching) })
          : isDefault
            ? t('console.setUpDefault')
            : t('console.custom')}
      </p>
      <ul className={styles.switches}>
        {SWITCHES.map((layer) => (
          <li key={layer.key} style={{ borderLeftColor: colourOf(layer.key) }}>
            <label>
              <input
                type="checkbox"
                disabled={!hydrated}
                role="switch"
                aria-checked={settings.layers[layer.key]}
                checked={settings.layers[layer.key]}
                onChange={(event) => change({ layers: { [layer.key]: event.target.checked } })}
              />
              <span>
                <span className={styles.switchName}>
                  {layer.number}. {tl(`names.${layer.key}`)}
                </span>
                <span className={styles.what}>{tl(`what.${layer.key}`)}</span>
              </span>
              <span className={styles.switchState} data-on={settings.layers[layer.key]}>
                {settings.layers[layer.key] ? t('console.switchOn') : t('console.switchOff')}
              </span>
            </label>
          </li>
        ))}
      </ul>
    </>
  );
}

const LAST_EXERCISE = 'lab:last-exercise';

function readLastExercise(): string | undefined {
  try {
    return window.localStorage.getItem(LAST_EXERCISE) ?? undefined;
  } catch {
    return undefined; // storage refused (a private window's policy): the list starts at the first
  }
}

function rememberLastExercise(id: string): void {
  try {
    window.localStorage.setItem(LAST_EXERCISE, id);
  } catch {
    // as above
  }
}
