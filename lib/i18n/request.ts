// next-intl's configuration for each server render: the language is the one the person chose with the
// switcher (a cookie), else their browser's first that we have (Accept-Language); no route prefix.
import { cookies, headers } from 'next/headers';
import { getRequestConfig } from 'next-intl/server';
import { LOCALE_COOKIE, localeOf } from './locales.ts';
import { MESSAGES } from './messages.ts';

export default getRequestConfig(async () => {
  const locale = localeOf((await cookies()).get(LOCALE_COOKIE)?.value, (await headers()).get('accept-language'));
  return { locale, messages: MESSAGES[locale], timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone };
});
