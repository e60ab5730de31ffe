import Link from 'next/link';
import { getTranslations } from 'next-intl/server';
import { startCheckout } from './actions';

export default async function HomePage() {
  const t = await getTranslations('home');
  return (
    <>
      <h1>{t('title')}</h1>
      <p>{t('intro')}</p>
      <p>{t('tryIt')}</p>
      <div style={{ display: 'flex', flexWrap: 'wrap', gap: '1rem', margin: '1.5rem 0' }}>
        <form action={startCheckout}>
          <button type="submit" className="button">
            {t('start')}
          </button>
        </form>
        <Link href="/lab" className="button secondary">
          {t('openLab')}
        </Link>
        <Link href="/scenarios" className="button secondary">
          {t('scenarioResults')}
        </Link>
      </div>
    </>
  );
}
