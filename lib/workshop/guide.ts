import 'server-only';
// The workshop's documents (docs/workshop.md, docs/facilitator.md and their Chinese), served by the app so that a
// room reads them from the room's own address: their `http://localhost:3000` links become links to this app,
// whatever its address; links to the repository's other files stay text (the repository is not served). And the
// handout: the guide with its answers left out (what the attendee sees and why), for print.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Marked, type Tokens } from 'marked';
import type { Locale } from '../i18n/locales.ts';

export type WorkshopDocument = 'workshop' | 'facilitator';

/** The document's Markdown in the reader's language (the English one for a language it is not written in). */
export async function readWorkshopDocument(name: WorkshopDocument, locale: Locale): Promise<string> {
  const file = locale === 'en' ? `${name}.md` : `${name}.${locale}.md`;
  return readFile(path.join(process.cwd(), 'docs', file), 'utf8');
}

/** GitHub's anchor of a heading: the guide's links and lib/lab/exercises.ts `anchor` use them. */
export function headingAnchor(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const markdown = new Marked({
  gfm: true,
  renderer: {
    heading({ tokens, depth, text }: Tokens.Heading) {
      const plain = text.replace(/[`*_]/g, '');
      return `<h${depth} id="${headingAnchor(plain)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
    },
    link({ href, tokens }: Tokens.Link) {
      const inner = this.parser.parseInline(tokens);
      const served = href.replace(/^http:\/\/localhost:3000(?=\/|$)/, '') || '/';
      // The app's own pages, and the web; a file of the repository is named, not linked.
      if (served.startsWith('/') || /^https?:\/\//.test(served) || served.startsWith('#')) {
        return `<a href="${escapeAttribute(served)}">${inner}</a>`;
      }
      return `${inner} (<code>${escapeText(href)}</code>)`;
    },
    image() {
      return ''; // the repository's screenshots: the served page is the real thing
    },
  },
});

/** The document as HTML. Its source is the repository's own Markdown, never a visitor's. */
export function renderWorkshopDocument(source: string): string {
  return markdown.parse(source, { async: false });
}

/** What a paragraph of an exercise is, by its bold label, in either language. */
const LABELS = {
  /** Kept whole: the situation, the question, and the steps that break it. */
  keep: /^\*\*(Situation|Predict|Break it|情境|预测|弄坏它)[^*]*\*\*/,
  /** Its steps kept, what they show left out: everything after the first colon or full stop. */
  steps: /^\*\*(Fix it|修好它)[^*]*\*\*/,
  /** Only the label kept, with room to write: what the attendee will see. */
  seen: /^\*\*(Watch|观察)[^*]*\*\*/,
} as const;

const ANSWER_BOX = '<div class="handout-answer"></div>';

/**
 * The handout: each exercise's situation, its prediction and its steps (the "Break it" lab and commands, the
 * "Fix it" switches), each with room to answer; what the attendee will see and why left out. Other sections
 * ("Before you start") stay whole.
 */
export function handoutOf(source: string): string {
  const sections = source.split(/^(?=## )/m);
  return sections
    .map((section) => (/^## \d+\. /.test(section) ? handoutSection(section) : section))
    .filter((section) => !/^## (Cheat sheet|速查表)/.test(section)) // a table of the answers
    .join('');
}

function handoutSection(section: string): string {
  const kept: string[] = [];
  for (const block of blocksOf(section.replace(/^### [\s\S]*$/m, ''))) {
    if (block.startsWith('## ') || block.startsWith('_') || block.startsWith('```')) kept.push(block);
    else if (LABELS.keep.test(block)) {
      kept.push(block);
      if (/^\*\*(Predict|预测)/.test(block)) kept.push(ANSWER_BOX);
    } else if (LABELS.steps.test(block)) kept.push(stepsOf(block), ANSWER_BOX);
    else if (LABELS.seen.test(block)) kept.push(/^\*\*[^*]+\*\*/.exec(block)?.[0] ?? '', ANSWER_BOX);
  }
  return `${kept.join('\n\n')}\n\n`;
}

/**
 * A "Fix it" paragraph's steps: its label and what follows, up to the first colon or full stop outside a code span
 * or a link's address ("Switch _Pending UI_ on, new checkout, double-click: the button turns …").
 */
export function stepsOf(block: string): string {
  const [label = ''] = /^\*\*[^*]+\*\*/.exec(block) ?? [];
  const text = block.slice(label.length);
  let code = false;
  let address = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '`') code = !code;
    else if (!code && text.startsWith('](', i)) address = true;
    else if (address && char === ')') address = false;
    else if (!code && !address && endsSteps(text, i)) {
      return `${label}${text.slice(0, i)}${/[：。]/.test(char ?? '') ? '。' : '.'}`.replace(/\s+/g, ' ');
    }
  }
  return `${label}${text}`.replace(/\s+/g, ' ');
}

/** A full stop, or a colon that does not introduce a switch's value ("_name_: _value_", the value in italics). */
function endsSteps(text: string, i: number): boolean {
  const char = text[i] ?? '';
  const spaced = /^\s/.test(text[i + 1] ?? '');
  if (char === '。' || (char === '.' && spaced)) return true;
  const colon = char === '：' || (char === ':' && spaced);
  return (
    colon &&
    !text
      .slice(i + 1)
      .trimStart()
      .startsWith('_')
  );
}

/** The blocks of a section: paragraphs, with a fenced code block kept whole (its blank lines included). */
function blocksOf(section: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fenced = false;
  for (const line of section.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (!fenced && line.trim() === '' && !line.startsWith('```')) {
      if (current.length > 0) blocks.push(current.join('\n'));
      current = [];
    } else current.push(line);
  }
  if (current.length > 0) blocks.push(current.join('\n'));
  return blocks;
}

const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (text: string) => escapeText(text).replace(/"/g, '&quot;');
