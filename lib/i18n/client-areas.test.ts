// The browser gets only CLIENT_AREAS of the messages (app/layout.tsx): a client component that reads another
// area would show its keys instead of words. Every 'use client' module's areas must be among them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_AREAS } from './messages.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return /\.tsx?$/.test(name) && !name.endsWith('.test.ts') ? [full] : [];
  });
}

describe('the messages sent to the browser', () => {
  it('hold every area a client component reads', () => {
    const read = new Set<string>();
    for (const file of [...sources(path.join(ROOT, 'app')), ...sources(path.join(ROOT, 'lib'))]) {
      const text = readFileSync(file, 'utf8');
      if (!/^['"]use client['"]/m.test(text)) continue;
      for (const [, area] of text.matchAll(/useTranslations\(\s*'([\w]+)/g)) read.add(area ?? '');
      expect(text, `${path.relative(ROOT, file)} reads messages without naming an area`).not.toMatch(
        /useTranslations\(\s*\)/,
      );
    }
    expect([...read].filter((area) => !(CLIENT_AREAS as readonly string[]).includes(area))).toEqual([]);
    expect(read.size).toBeGreaterThan(3);
  });
});
