// Every Chinese message, read the way e2e/i18n.ts reads a page: no English word outside code and the names the
// article itself writes in Latin letters. A page shows only some of its messages at a time (an error, a fault,
// a problem type); this reads them all, so the pages' Chinese pass can render a few of each.
import { describe, expect, it } from 'vitest';
import { ALLOWED } from '../../e2e/i18n.ts';
import { MESSAGES } from './messages.ts';

function leaves(value: unknown, prefix = ''): Array<[string, string]> {
  if (typeof value === 'string') return [[prefix, value]];
  return Object.entries(value as object).flatMap(([key, child]) => leaves(child, prefix ? `${prefix}.${key}` : key));
}

/** The words a reader sees: code, tags, arguments and ICU's own syntax taken out. */
function visibleWords(message: string): string[] {
  const text = message
    .replace(/<code>.*?<\/code>/gs, ' ')
    .replace(/<\/?\w+>/g, ' ')
    .replace(/\{\s*\w+\s*,\s*(?:select|plural|selectordinal)\s*,/g, '{')
    .replace(/(?:=\d+|\b\w+)\s*\{/g, '{')
    .replace(/\{\s*\w+\s*(?:,\s*\w+\s*(?:,[^{}]*)?)?\}/g, ' ')
    // Identifiers a program reads, as the API's plain-text details write them: paths and media types
    // (/api/docs, application/json), assignments (LAB_ENABLED=false), header names (Content-Type), constants.
    .replace(/[\w.;-]*[/=][\w./=;-]*/g, ' ')
    .replace(/\b[A-Z][A-Za-z]*(?:-[A-Z][A-Za-z]*)+\b/g, ' ')
    .replace(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g, ' ');
  return [...text.matchAll(/[A-Za-z][A-Za-z_]*(?:['’-][A-Za-z]+)*/g)]
    .map(([word]) => word)
    .filter((word) => word.length > 1 && !ALLOWED.has(word));
}

describe('the Chinese messages', () => {
  it('read as ICU arguments and syntax are taken out', () => {
    expect(visibleWords('{channel, select, browser {浏览器} other {API}}请求，{n} 分 <code>ord_1 x</code>')).toEqual(
      [],
    );
    expect(visibleWords('请求 then 结束')).toEqual(['then']);
    expect(visibleWords('以 application/json 发送（LAB_ENABLED=false，Content-Type 和 Sec-Fetch-Site）')).toEqual([]);
  });

  it('have no English word left outside code', () => {
    const left = leaves(MESSAGES['zh-CN'])
      .map(([key, message]) => [key, visibleWords(message)] as const)
      .filter(([, words]) => words.length > 0)
      .map(([key, words]) => `${key}: ${words.join(' ')}`);
    expect(left).toEqual([]);
  });
});
