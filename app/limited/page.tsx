import type { Metadata } from 'next';
import Link from 'next/link';
import { getTranslations } from 'next-intl/server';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('common.limited'))('title') };
}

/** Where "Start a checkout" and Pay lead a browser that asked for too many in a minute. */
export default async function LimitedPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { seconds } = await searchParams;
  const wait = typeof seconds === 'string' && /^\d{1,4}$/.test(seconds) ? Number(seconds) : 60;
  const t = await getTranslations('common.limited');
  return (
    <>
      <h1>{t('title')}</h1>
      <p role="alert">{t('text', { seconds: wait })}</p>
      <p>
        <Link href="/">{t('back')}</Link>
      </p>
    </>
  );
}
