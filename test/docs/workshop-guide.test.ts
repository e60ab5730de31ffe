// docs/workshop.md against the data it describes: each exercise links to its preset and says in words
// exactly what the preset applies (lib/lab/exercises.ts `describePreset`), each exercise's anchor is a
// heading of the guide, and every command the guide prints outside its exercise blocks is one a test runs
// (e2e/guide.ts SETUP_COMMANDS). The exercise blocks themselves run in Playwright (e2e/workshop-guide.spec.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUIDE_PATH, guideBlocks, SETUP_COMMANDS } from '../../e2e/guide';
import { describePreset, EXERCISES } from '../../lib/lab/exercises';
import { NUMBER_WORDS } from './number-words.ts';

const guide = readFileSync(GUIDE_PATH, 'utf8');
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('docs/workshop.md', () => {
  const headings = [...guide.matchAll(/^#{2,3} (.+)$/gm)].map((match) => anchorOf(match[1] ?? ''));

  it.each(EXERCISES.map((exercise) => [exercise.id, exercise] as const))(
    'exercise %s links to its preset and says exactly what it applies',
    (id, exercise) => {
      const link = literal(`](http://localhost:3000/lab?exercise=${id})`);
      const sentence = new RegExp(`${link}(?: in the lab:| is) ${literal(describePreset(exercise))}[.;,]`);
      const found = sentence.test(guide.replace(/\s+/g, ' '));
      expect(found, `the guide's words for preset ${id}: "… in the lab: ${describePreset(exercise)}."`).toBe(true);
      expect(headings).toContain(exercise.anchor);
    },
  );

  it('counts its exercises as the data does, and so does the README', () => {
    const numbers = new Set(EXERCISES.map((exercise) => exercise.id.replace(/[a-z]$/, '')));
    const count = NUMBER_WORDS[numbers.size] ?? String(numbers.size);
    expect(guide).toMatch(new RegExp(`^${count[0]?.toUpperCase()}${count.slice(1)} exercises`, 'm'));
    expect(readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8')).toMatch(
      new RegExp(`turns this into ${count} exercises`),
    );
    expect([...guide.matchAll(/^## (\d+)\. /gm)].map((match) => match[1])).toEqual([...numbers]);
  });

  it('prints no command outside the exercise blocks that no test runs', () => {
    const setup = guideBlocks(guide).filter((block) => block.tag === undefined);
    expect(setup.length).toBeGreaterThan(0);
    for (const block of setup) {
      for (const line of block.code.split('\n')) {
        const command = line.replace(/\s+#.*$/, '').trim();
        if (command) expect(Object.keys(SETUP_COMMANDS), `line ${block.line}: ${command}`).toContain(command);
      }
    }
  });

  it('has every command call as the attendee’s own name, $ME, set once at the top (issue 28, finding 4)', () => {
    // With one fixed name ('shop'), a room's attendees shared one rate limit and read and paid each other's orders.
    for (const file of [GUIDE_PATH, GUIDE_PATH.replace(/\.md$/, '.zh-CN.md')]) {
      const text = readFileSync(file, 'utf8');
      const named = [...text.matchAll(/X-Client-Id: ([^'"\s]+)/g)].map((match) => match[1]);
      expect(named.length, file).toBeGreaterThan(0);
      expect(new Set(named), file).toEqual(new Set(['$ME']));
      expect(text, file).toMatch(/^export ME=/m);
      expect(text, file).toContain('/lab?client=$ME');
    }
  });

  it('tags each exercise block once, and names the exercises it belongs to', () => {
    const tags = guideBlocks(guide).flatMap((block) => (block.tag ? [block.tag] : []));
    expect(tags).toEqual(['exercise-7', 'exercise-10']);
  });
});
