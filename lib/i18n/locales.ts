// The demo's languages: English, and Simplified Chinese (the article's). Pure: the server picks one per
// request (lib/i18n/request.ts), the API negotiates its problems' `detail` with the same rule.
import { match } from '@formatjs/intl-localematcher';
import Negotiator from 'negotiator';

export const LOCALES = ['en', 'zh-CN'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** The language a person chose with the switcher (no route prefix: the same address in both languages). */
export const LOCALE_COOKIE = 'locale';
export const LOCALE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;

/** Each language's name, in that language (the switcher shows them so). */
export const LOCALE_NAMES: Record<Locale, string> = { en: 'English', 'zh-CN': '中文' };

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** The best of our languages for an Accept-Language header (`zh`, `zh-Hans`, `zh-TW` … → zh-CN), else English. */
export function negotiateLocale(acceptLanguage: string | null | undefined): Locale {
  if (!acceptLanguage) return DEFAULT_LOCALE;
  const requested = new Negotiator({ headers: { 'accept-language': acceptLanguage } }).languages();
  try {
    const found = match(requested, [...LOCALES, 'zh'], DEFAULT_LOCALE, { algorithm: 'best fit' });
    return found === 'zh' ? 'zh-CN' : isLocale(found) ? found : DEFAULT_LOCALE;
  } catch {
    return DEFAULT_LOCALE; // a malformed tag
  }
}

/** A page's language: the person's choice (the cookie), else their browser's. */
export function localeOf(cookie: string | undefined, acceptLanguage: string | null | undefined): Locale {
  return isLocale(cookie) ? cookie : negotiateLocale(acceptLanguage);
}
