// Why a step of the timeline decided what it did, as a message of messages/<locale>/timeline.json: the lab
// shows it in the reader's language, while the event's `detail` carries the same sentence in English, so the
// API, the logs and every test that reads them are unchanged. Pure (no React): the payment pipeline, the
// reconciler, the receipt worker and the launcher's gateway lane all word their steps through it. next-intl's
// translator comes from use-intl/core, its React-free half: `next-intl` itself pulls React's client hooks in,
// which a plain Node process started with the react-server condition (the launcher, the worker) cannot load.
import { createTranslator } from 'use-intl/core';
import english from '../../messages/en/timeline.json' with { type: 'json' };

import type { Reason } from '../telemetry/decisions.ts';

export { type Reason as TimelineReason, type ReasonKey, reason } from '../telemetry/decisions.ts';

const translate = createTranslator({ locale: 'en', messages: english, namespace: 'reasons' });

/** The reason in English: the event's `detail`. */
export function englishDetail({ key, values }: Reason): string {
  return translate(key, values);
}

/** An event's `reason` and its `detail`, the same in English. */
export function said(why: Reason): { reason: Reason; detail: string } {
  return { reason: why, detail: englishDetail(why) };
}
