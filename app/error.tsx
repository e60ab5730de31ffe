'use client';
import { useTranslations } from 'next-intl';

// Unexpected faults end here (expected outcomes are returned as values). No stack trace is shown.
export default function ErrorPage({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  const t = useTranslations('common.error');
  return (
    <>
      <h1>{t('title')}</h1>
      <p>{t('text')}</p>
      <button type="button" className="button" onClick={reset}>
        {t('retry')}
      </button>
    </>
  );
}
