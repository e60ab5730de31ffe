// Each deliberate bug of the mutation run (`npm run races -- --mutants`) still patches the code it is meant
// to break: its text is in its file exactly once. Checked in every `npm test`, so a change that moves the
// code fails here at once, not only in the mutation run.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MUTANTS } from './mutants.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the mutants follow the code', () => {
  it.each(MUTANTS.map((mutant) => [mutant.name, mutant] as const))('%s applies exactly once', (_, mutant) => {
    const text = readFileSync(path.join(ROOT, mutant.file), 'utf8');
    expect(text.split(mutant.from).length - 1, `${mutant.file}: ${mutant.from}`).toBe(1);
  });
});
