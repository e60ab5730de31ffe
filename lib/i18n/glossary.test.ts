import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GLOSSARY } from './glossary.ts';
import { MESSAGES } from './messages.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the glossary', () => {
  it('names code that exists', () => {
    const missing = GLOSSARY.flatMap((entry) => entry.code).filter((file) => !existsSync(path.join(ROOT, file)));
    expect(missing).toEqual([]);
  });

  it('explains every term in both languages, and nothing else', () => {
    const ids = GLOSSARY.map((entry) => entry.id).sort();
    expect(Object.keys(MESSAGES.en.glossary.entries).sort()).toEqual(ids);
    expect(Object.keys(MESSAGES['zh-CN'].glossary.entries).sort()).toEqual(ids);
  });
});
