// Why a step of the timeline decided what it did, as a message of messages/<locale>/timeline.json: the lab
// shows it in the reader's language, while the event's `detail` carries the same sentence in English, so the
// API, the logs and every test that reads them are unchanged. Pure (no React): the payment pipeline, the
// reconciler, the receipt worker and the launcher's gateway lane all word their steps through it. next-intl's
// translator comes from use-intl/core, its React-free half: `next-intl` itself pulls React's client hooks in,
// which a plain Node process started with the react-server condition (the launcher, the worker) cannot load.
import { createTranslator } from 'use-intl/core';
import english from '../../messages/en/timeline.json' with { type: 'json' };

export type ReasonKey = keyof typeof english.reasons;

/** A reason's message and its values (ids, counts and the selectors of the message's choices). */
export type TimelineReason = { key: ReasonKey; values?: Record<string, string | number> };

const translate = createTranslator({ locale: 'en', messages: english, namespace: 'reasons' });

/**
 * A reason to mark a step with. Numbers are kept as written (a fence, an amount in cents, a charge id are not
 * quantities to group as "4,200"), so the English detail reads as it always has.
 */
export function reason(key: ReasonKey, values?: Record<string, string | number | undefined>): TimelineReason {
  if (!values) return { key };
  const written: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) if (value !== undefined) written[name] = String(value);
  return { key, values: written };
}

/** The reason in English: the event's `detail`. */
export function englishDetail({ key, values }: TimelineReason): string {
  return translate(key, values);
}

/** An event's `reason` and its `detail`, the same in English. */
export function said(why: TimelineReason): { reason: TimelineReason; detail: string } {
  return { reason: why, detail: englishDetail(why) };
}
