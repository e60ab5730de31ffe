// Money and times as the reader's language writes them (pure, browser-safe). The currency stays USD in every
// language: the order is in dollars, whoever reads it (中文 writes "US$42.00", so it is not taken for yuan).
import { DEFAULT_LOCALE, type Locale } from './i18n/locales.ts';

const money = new Map<string, Intl.NumberFormat>();
const times = new Map<string, Intl.DateTimeFormat>();

export function formatCents(cents: number, locale: Locale = DEFAULT_LOCALE): string {
  let format = money.get(locale);
  if (!format) {
    format = new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD' });
    money.set(locale, format);
  }
  return format.format(cents / 100);
}

/** A time of day to the second, on a 24-hour clock in every language ("14:03:22"), in the reader's zone. */
export function formatTime(date: Date, locale: Locale = DEFAULT_LOCALE): string {
  let format = times.get(locale);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, {
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    times.set(locale, format);
  }
  return format.format(date);
}
