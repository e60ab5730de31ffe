// Every exercise has its title as a message (lab.exercises.<id>), the English one word for word the list's, so
// the lab's exercise selector names each exercise in the reader's language and as the guide titles it in English.
import { expect, it } from 'vitest';
import { MESSAGES } from '../i18n/messages.ts';
import { EXERCISES } from './exercises.ts';

it('every exercise has its title as a message, the English one as the list has it', () => {
  const titles: Record<string, string> = MESSAGES.en.lab.exercises;
  expect(Object.fromEntries(EXERCISES.map(({ id }) => [id, titles[id]]))).toEqual(
    Object.fromEntries(EXERCISES.map(({ id, title }) => [id, title])),
  );
  expect(Object.keys(titles).sort()).toEqual(EXERCISES.map(({ id }) => id).sort());
});
