// The handout (issue 29): each exercise's question and steps, with what the attendee will see left out, in both
// guides. Read from the real documents, so that a guide paragraph that mixes its steps with what they show, or a
// new label the handout does not know, fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { handoutOf, stepsOf } from './guide.ts';

const GUIDES = { en: 'docs/workshop.md', 'zh-CN': 'docs/workshop.zh-CN.md' } as const;
const LABEL = /^\*\*([^*]+)\*\*/;

/** The numbered sections of a document, by number: "8" → its text, up to any extra ("### …"). */
function sectionsOf(text: string): Map<string, string> {
  const sections = new Map<string, string>();
  for (const section of text.split(/^(?=## )/m)) {
    const number = /^## (\d+)\. /.exec(section)?.[1];
    if (number) sections.set(number, section.replace(/^### [\s\S]*$/m, '')); // an extra (the presenter's)
  }
  return sections;
}

describe('the handout', () => {
  for (const [locale, file] of Object.entries(GUIDES)) {
    const guide = readFileSync(file, 'utf8');
    const handout = sectionsOf(handoutOf(guide));

    it(`keeps every prediction and every step, with room to answer (${locale})`, () => {
      for (const [number, section] of sectionsOf(guide)) {
        const kept = handout.get(number) ?? '';
        for (const block of section.split(/\n\s*\n/)) {
          const label = LABEL.exec(block)?.[1] ?? '';
          if (/^(Situation|Predict|Break it|情境|预测|弄坏它)/.test(label)) expect(kept, number).toContain(block);
          if (/^(Fix it|修好它)/.test(label)) expect(kept, number).toContain(stepsOf(block));
        }
        const questions = (section.match(/^\*\*(Predict|预测|Watch|观察|Fix it|修好它)/gm) ?? []).length;
        expect(kept.split('<div class="handout-answer"></div>').length - 1, number).toBe(questions);
      }
    });

    it(`leaves out what each step shows and why (${locale})`, () => {
      for (const [number, section] of sectionsOf(guide)) {
        const kept = handout.get(number) ?? '';
        for (const block of section.split(/\n\s*\n/)) {
          const label = LABEL.exec(block)?.[1] ?? '';
          if (!/^(Watch|观察|Why|为什么|Fix it|修好它)/.test(label)) continue;
          const said = block.slice(/^(Fix it|修好它)/.test(label) ? stepsOf(block).length : label.length + 4).trim();
          // Each answer's last sentence (where the lesson is), nowhere in the section's handout.
          const last = said
            .split(/(?<=[.。])\s*/)
            .filter((sentence) => sentence.length > 12)
            .at(-1);
          if (last) expect(kept, `${number}: ${label}`).not.toContain(last.replace(/\s+/g, ' '));
        }
        expect(kept, number).not.toMatch(/^\*\*(Why|为什么)/m);
      }
    });
  }

  it('cuts a "Fix it" at the first colon or full stop, but not inside a code span, a link or before a value', () => {
    expect(stepsOf('**Fix it.** Switch _Pending UI_ on, double-click: the button turns `aria-disabled`.')).toBe(
      '**Fix it.** Switch _Pending UI_ on, double-click.',
    );
    expect(stepsOf('**Fix it.** [Set up](http://localhost:3000/lab?exercise=6) in the lab: only _Unique_ on.')).toBe(
      '**Fix it.** [Set up](http://localhost:3000/lab?exercise=6) in the lab.',
    );
    expect(stepsOf('**Fix it.** _What a duplicate is told_: _The first result_. New checkout: paid.')).toBe(
      '**Fix it.** _What a duplicate is told_: _The first result_.',
    );
    expect(stepsOf('**修好它。** 打开 _幂等键_，新的收银：“处理中”。')).toBe('**修好它。** 打开 _幂等键_，新的收银。');
    expect(stepsOf('**Fix it.** Run `a: b. c` again')).toBe('**Fix it.** Run `a: b. c` again');
  });
});
