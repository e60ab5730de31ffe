// No string is left untranslated by accident: every language has exactly English's keys, and no message is
// empty. (e2e/i18n.spec.ts renders every page in Chinese and looks for English left in the visible text.)
import { describe, expect, it } from 'vitest';
import { LOCALES } from './locales.ts';
import { MESSAGES } from './messages.ts';

/** "area.key.sub" for every message (a leaf string). */
function keysOf(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix];
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, child]) => keysOf(child, prefix ? `${prefix}.${key}` : key));
  }
  return [`${prefix} (not a string: ${JSON.stringify(value)})`];
}

function leaves(value: unknown, prefix = ''): Array<[string, string]> {
  if (typeof value === 'string') return [[prefix, value]];
  return Object.entries(value as object).flatMap(([key, child]) => leaves(child, prefix ? `${prefix}.${key}` : key));
}

/** The ICU placeholders of a message ({seconds}, {count, plural, …}): a translation keeps every one. */
const placeholders = (message: string) => [...message.matchAll(/\{(\w+)/g)].map((m) => m[1]).sort();

describe('the messages', () => {
  const english = MESSAGES.en;
  for (const locale of LOCALES.filter((l) => l !== 'en')) {
    it(`${locale} has exactly English’s keys`, () => {
      const theirs = new Set(keysOf(MESSAGES[locale]));
      const ours = new Set(keysOf(english));
      expect(
        [...ours].filter((key) => !theirs.has(key)),
        `missing in ${locale}`,
      ).toEqual([]);
      expect(
        [...theirs].filter((key) => !ours.has(key)),
        `only in ${locale}`,
      ).toEqual([]);
    });

    it(`${locale} keeps every placeholder of each English message`, () => {
      const theirs = new Map(leaves(MESSAGES[locale]));
      const differ = leaves(english).filter(
        ([key, message]) =>
          theirs.has(key) &&
          JSON.stringify(placeholders(message)) !== JSON.stringify(placeholders(theirs.get(key) ?? '')),
      );
      expect(differ.map(([key]) => key)).toEqual([]);
    });
  }

  it('has no empty message', () => {
    for (const locale of LOCALES) {
      expect(
        leaves(MESSAGES[locale])
          .filter(([, message]) => message.trim() === '')
          .map(([key]) => key),
      ).toEqual([]);
    }
  });
});
