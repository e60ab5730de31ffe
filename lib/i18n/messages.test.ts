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

/** Where the brace opened at `open` closes. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return text.length;
}

/**
 * The ICU arguments of a message ({seconds}, {count, plural, …}, and those inside the branches of a select or a
 * plural): a translation keeps every one. A branch's words are not arguments: `{layer, select, stateMachine {0 rows}
 * other {…}}` may say "影响 0 行" in Chinese.
 */
function placeholders(message: string): string[] {
  const found = new Set<string>();
  const walk = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      if (text[i] !== '{') continue;
      const end = closing(text, i);
      const inner = text.slice(i + 1, end);
      const [name = '', kind = ''] = inner.split(',').map((part) => part.trim());
      found.add(name);
      if (['select', 'plural', 'selectordinal'].includes(kind)) {
        const branches = inner.slice(inner.indexOf(',', inner.indexOf(',') + 1) + 1);
        for (let j = 0; j < branches.length; j++) {
          if (branches[j] !== '{') continue;
          const branchEnd = closing(branches, j);
          walk(branches.slice(j + 1, branchEnd));
          j = branchEnd;
        }
      }
      i = end;
    }
  };
  walk(message);
  return [...found].sort();
}

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
