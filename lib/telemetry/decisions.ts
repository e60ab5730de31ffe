// The words of a decision, pure and shared with the browser: what a step decided, where, and why (a message of
// messages/<locale>/timeline.json and its values). The business code records them as span events
// (spans.ts); the lab's timeline and every screen read them back.
import type english from '../../messages/en/timeline.json';
import type { Layer } from '../defences/layers.ts';

/** The attribute of a decision's reason; its values are `payonce.reason.<name>`. */
export const ATTR_REASON = 'payonce.reason';

/** What a step decided: the timeline's decisions (messages/en/timeline.json), which every screen words. */
export type Decision = keyof (typeof english)['decisions'];

/** Where a decision was taken: a layer, or a step of the pipeline that is not one. */
export type Step = Layer | 'request' | 'bank' | 'reconcile' | 'outcome' | 'receipt';

export type ReasonKey = keyof (typeof english)['reasons'];

/** A reason's message and its values (ids, counts and the selectors of the message's choices). */
export type Reason = { key: ReasonKey; values?: Record<string, string> };

/**
 * A reason for a decision. Numbers are kept as written (a fence, an amount in cents, a charge id are not
 * quantities to group as "4,200").
 */
export function reason(key: ReasonKey, values?: Record<string, string | number | undefined>): Reason {
  if (!values) return { key };
  const written: Record<string, string> = {};
  for (const name in values) {
    const value = values[name];
    if (value !== undefined) written[name] = String(value);
  }
  return { key, values: written };
}
