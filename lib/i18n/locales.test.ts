import { describe, expect, it } from 'vitest';
import { localeOf, negotiateLocale } from './locales.ts';

describe('the language of a page', () => {
  it('follows the browser on a first visit', () => {
    expect(negotiateLocale('zh-CN,zh;q=0.9,en;q=0.8')).toBe('zh-CN');
    expect(negotiateLocale('zh')).toBe('zh-CN');
    expect(negotiateLocale('zh-Hans-CN')).toBe('zh-CN');
    expect(negotiateLocale('en-GB,en;q=0.9')).toBe('en');
    expect(negotiateLocale('fr-FR,zh;q=0.5,en;q=0.3')).toBe('zh-CN');
    expect(negotiateLocale('fr-FR')).toBe('en');
    expect(negotiateLocale(undefined)).toBe('en');
    expect(negotiateLocale('')).toBe('en');
  });

  it('never fails on a header it cannot read', () => {
    expect(negotiateLocale('!!!,;q=abc,zh-')).toMatch(/^(en|zh-CN)$/);
  });

  it('keeps the choice made with the switcher over the browser’s', () => {
    expect(localeOf('en', 'zh-CN')).toBe('en');
    expect(localeOf('zh-CN', 'en')).toBe('zh-CN');
    expect(localeOf('de', 'zh-CN')).toBe('zh-CN'); // not one of ours: ignored
  });
});
