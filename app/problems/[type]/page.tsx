import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { getTranslations } from 'next-intl/server';
import type { ReactNode } from 'react';
import { isProblemType, PROBLEM_TYPES, type ProblemInfo, problemTypeUri } from '@/lib/http/problem-types';

// The page a problem's `type` points to (RFC 9457: the type URI resolves to human-readable documentation).
// Its words are messages (problems.types.<type>: English is lib/http/problem-types.ts word for word); the
// example stays the English body an API client gets without Accept-Language.
type Props = { params: Promise<{ type: string }> };

export function generateStaticParams() {
  return Object.keys(PROBLEM_TYPES).map((type) => ({ type }));
}
export const dynamicParams = false;

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { type } = await params;
  const t = await getTranslations('problems');
  return { title: isProblemType(type) ? t(`types.${type}.name`) : t('pages.fallbackTitle') };
}

const RETRY = {
  no: 'no',
  'after Retry-After': 'afterRetryAfter',
  'after fixing the request': 'afterFixing',
  'after reloading the page': 'afterReloading',
} as const satisfies Record<ProblemInfo['retry'], string>;

const code = (chunks: ReactNode) => <code>{chunks}</code>;

export default async function ProblemPage({ params }: Props) {
  const { type } = await params;
  if (!isProblemType(type)) notFound();
  const t = await getTranslations('problems');
  const info: ProblemInfo = PROBLEM_TYPES[type];
  const example = { type: problemTypeUri(type), status: info.status, ...info.example };
  return (
    <article className="problem-page">
      <p className="small muted">
        <Link href="/problems">{t('pages.title')}</Link> · <code>{problemTypeUri(type)}</code>
      </p>
      <h1>{t(`types.${type}.name`)}</h1>
      <p>{t.rich('pages.http', { status: info.status, strong: (chunks) => <strong>{chunks}</strong>, code })}</p>
      <h2>{t('pages.whatItMeans')}</h2>
      <p>{t.rich(`types.${type}.means`, { code })}</p>
      <h2>{t('pages.whatToDo')}</h2>
      <p>{t.rich(`types.${type}.todo`, { code })}</p>
      <p>
        <strong>{t('pages.retryQuestion')}</strong> {t(`pages.retry.${RETRY[info.retry]}`)}
      </p>
      <h2>{t('pages.example')}</h2>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a wide example scrolls: keyboard users must reach it (axe scrollable-region-focusable) */}
      <pre className="code-block" tabIndex={0}>
        <code>{JSON.stringify(example, null, 2)}</code>
      </pre>
      <p className="small muted">{t.rich('pages.exampleNote', { code })}</p>
    </article>
  );
}
