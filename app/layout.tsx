import type { Metadata, Viewport } from 'next';
import Link from 'next/link';
import { NextIntlClientProvider } from 'next-intl';
import { getLocale, getMessages, getTranslations } from 'next-intl/server';
import type { ReactNode } from 'react';
import { CLIENT_AREAS } from '@/lib/i18n/messages';
import { LocaleSwitcher } from './locale-switcher';
import './globals.css';

export async function generateMetadata(): Promise<Metadata> {
  const t = await getTranslations('common');
  return { title: { default: t('brand'), template: `%s · ${t('brand')}` }, description: t('description') };
}

export const viewport: Viewport = { width: 'device-width', initialScale: 1 };

// Every page is rendered per request: it carries this response's script nonce (proxy.ts), and a page that
// sets a session cookie must never be one a cache keeps and hands to the next visitor.
export const dynamic = 'force-dynamic';

export default async function RootLayout({ children }: { children: ReactNode }) {
  const locale = await getLocale();
  const t = await getTranslations('common');
  // The browser gets the areas its client components read; the others (the problems' 14 KB among them) are
  // only ever rendered on the server.
  const messages = await getMessages();
  const forTheBrowser = Object.fromEntries(CLIENT_AREAS.map((area) => [area, messages[area]]));
  return (
    <html lang={locale}>
      <body>
        <NextIntlClientProvider messages={forTheBrowser}>
          <header className="site-header">
            <Link href="/" className="brand">
              {t('brand')}
            </Link>
            <nav aria-label={t('nav.label')}>
              <Link href="/lab">{t('nav.lab')}</Link>
              <Link href="/workshop">{t('nav.workshop')}</Link>
              <Link href="/scenarios">{t('nav.scenarios')}</Link>
              <Link href="/glossary">{t('nav.glossary')}</Link>
              <Link href="/api/docs">{t('nav.api')}</Link>
            </nav>
            <LocaleSwitcher />
          </header>
          <main>{children}</main>
        </NextIntlClientProvider>
      </body>
    </html>
  );
}
