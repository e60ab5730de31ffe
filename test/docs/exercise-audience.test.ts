// Who plays each exercise in a room (issue 29, item 8: nothing said which exercises were the presenter's): the
// line under each numbered heading of both guides is the one its audience in lib/lab/exercises.ts names.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXERCISES, sectionOf } from '../../lib/lab/exercises.ts';
import { AUDIENCE_LINES } from '../../lib/workshop/audience-words.ts';

const GUIDES = { en: 'docs/workshop.md', 'zh-CN': 'docs/workshop.zh-CN.md' } as const;

describe('the guides say who plays each exercise', () => {
  for (const [language, file] of Object.entries(GUIDES) as Array<[keyof typeof GUIDES, string]>) {
    it(`in ${file}`, () => {
      const lines = readFileSync(path.resolve(import.meta.dirname, '../..', file), 'utf8').split('\n');
      const said = new Map<string, string>();
      lines.forEach((line, index) => {
        const section = /^## (\d+)\. /.exec(line)?.[1];
        if (section) said.set(section, lines[index + 2] ?? '');
      });
      for (const exercise of EXERCISES) {
        expect(said.get(sectionOf(exercise.id)), `exercise ${exercise.id}`).toBe(
          AUDIENCE_LINES[language][exercise.audience],
        );
      }
      // The presenter's exercises are the ones a room cannot play from a browser alone.
      const presenters = [...new Set(EXERCISES.filter((e) => e.audience === 'presenter').map((e) => sectionOf(e.id)))];
      expect(presenters).toEqual(['6', '9', '10']);
    });
  }
});

describe('the facilitator’s plan', () => {
  const read = (file: string) => readFileSync(path.resolve(import.meta.dirname, '../..', file), 'utf8');
  const shape = (text: string) => ({
    headings: text.split('\n').filter((line) => line.startsWith('#')).length,
    rows: text.split('\n').filter((line) => line.startsWith('| ')).length,
    items: text.split('\n').filter((line) => line.startsWith('- **')).length,
  });
  it('is the same plan in both languages, ninety minutes from 0 to 90', () => {
    const english = read('docs/facilitator.md');
    expect(shape(read('docs/facilitator.zh-CN.md'))).toEqual(shape(english));
    const times = [...english.matchAll(/^\| (\d+)-(\d+) \|/gm)].map(([, from, to]) => [Number(from), Number(to)]);
    expect(times[0]?.[0]).toBe(0);
    expect(times.at(-1)?.[1]).toBe(90);
    for (let i = 1; i < times.length; i++) expect(times[i]?.[0]).toBe(times[i - 1]?.[1]); // no gap, no overlap
  });
});
