'use client';
// English or 中文, from every page: the choice is a cookie (no route prefix), and the page re-renders in place
// (router.refresh keeps what the client holds: a checkout's form, the lab's switches).
import { useRouter } from 'next/navigation';
import { useLocale, useTranslations } from 'next-intl';
import { useTransition } from 'react';
import { LOCALE_COOKIE, LOCALE_COOKIE_MAX_AGE_SECONDS, LOCALE_NAMES, LOCALES, type Locale } from '@/lib/i18n/locales';

export function LocaleSwitcher() {
  const t = useTranslations('common.language');
  const locale = useLocale();
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const choose = (next: Locale) => {
    // biome-ignore lint/suspicious/noDocumentCookie: a plain preference cookie, read by the server on each render
    document.cookie = `${LOCALE_COOKIE}=${next}; path=/; max-age=${LOCALE_COOKIE_MAX_AGE_SECONDS}; samesite=lax`;
    startTransition(() => router.refresh());
  };
  return (
    <label className="locale-switcher">
      <span className="visually-hidden">{t('label')}</span>
      <select
        value={locale}
        aria-busy={pending}
        onChange={(event) => choose(event.target.value as Locale)}
        data-testid="locale-switcher"
      >
        {LOCALES.map((option) => (
          <option key={option} value={option} lang={option}>
            {LOCALE_NAMES[option]}
          </option>
        ))}
      </select>
    </label>
  );
}
