// docs/workshop.zh-CN.md against docs/workshop.md: the Chinese guide is the same workshop, so an attendee with
// either guide does the same exercises. The same numbered exercises in the same order, each linking the same
// presets and naming the same `-g` rows and tests; every shell block byte for byte the English one (so
// e2e/guide.ts could run either); the pictures it shows exist; and each guide links the other.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUIDE_PATH, guideBlocks } from '../../e2e/guide';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CHINESE_PATH = path.join(ROOT, 'docs', 'workshop.zh-CN.md');
const english = readFileSync(GUIDE_PATH, 'utf8');
const chinese = readFileSync(CHINESE_PATH, 'utf8');

/** The guide's exercises, by number: the text of each `## N. …` section up to the next heading of its level. */
function exercises(markdown: string): Array<{ number: string; text: string }> {
  return [...markdown.matchAll(/^## (\d+)\. [^\n]*\n([\s\S]*?)(?=^## |(?![\s\S]))/gm)].map((match) => ({
    number: match[1] ?? '',
    text: match[2] ?? '',
  }));
}

/** What a section asks an attendee to run or open: its presets, and its commands' `-g` patterns, in order. */
function asks(text: string) {
  return {
    presets: [...text.matchAll(/\]\((http:\/\/localhost:3000\/lab\?exercise=\w+)\)/g)].map((match) => match[1]),
    commands: [...text.matchAll(/npm run (scenarios|test:e2e) --/g)].map((match) => match[1]),
    patterns: [...text.matchAll(/-g "([^"]+)"/g)].map((match) => match[1]),
  };
}

describe('docs/workshop.zh-CN.md', () => {
  it('has the English guide’s exercises, numbered and ordered the same', () => {
    const numbers = (markdown: string) => exercises(markdown).map((exercise) => exercise.number);
    expect(numbers(english)).toHaveLength(15);
    expect(numbers(chinese)).toEqual(numbers(english));
  });

  it('sets up the same presets and runs the same rows and tests in each exercise', () => {
    const theirs = exercises(chinese);
    for (const [index, exercise] of exercises(english).entries()) {
      expect(asks(theirs[index]?.text ?? ''), `exercise ${exercise.number}`).toEqual(asks(exercise.text));
    }
    expect(asks(english).patterns.length).toBeGreaterThan(15);
    expect(asks(chinese)).toEqual(asks(english));
  });

  it('prints every shell block byte for byte as the English guide does (tagged exercise blocks included)', () => {
    const blocks = (markdown: string) => guideBlocks(markdown).map(({ tag, code }) => ({ tag, code }));
    expect(blocks(english).length).toBeGreaterThan(2);
    expect(blocks(chinese)).toEqual(blocks(english));
  });

  it('shows pictures that exist, and links the English guide, which links it back, as the README does', () => {
    for (const [, image] of chinese.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)) {
      expect(existsSync(path.join(ROOT, 'docs', image ?? '')), image).toBe(true);
    }
    expect(chinese).toContain('](workshop.md)');
    expect(english).toContain('](workshop.zh-CN.md)');
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain('](docs/workshop.zh-CN.md)');
  });
});
