import Link from 'next/link';
import { getTranslations } from 'next-intl/server';

export default async function NotFound() {
  const t = await getTranslations('common.notFound');
  return (
    <>
      <h1>{t('title')}</h1>
      <p>{t('text')}</p>
      <Link href="/">{t('back')}</Link>
    </>
  );
}
