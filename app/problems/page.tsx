import type { Metadata } from 'next';
import Link from 'next/link';
import { getTranslations } from 'next-intl/server';
import { PROBLEM_TYPES, type ProblemType, problemTypeUri } from '@/lib/http/problem-types';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('problems'))('pages.title') };
}

/** Every problem `type` the API answers with (RFC 9457), each linked to its page. */
export default async function ProblemsPage() {
  const t = await getTranslations('problems');
  const types = Object.keys(PROBLEM_TYPES) as ProblemType[];
  return (
    <>
      <h1>{t('pages.title')}</h1>
      <p>
        {t.rich('pages.intro', {
          code: (chunks) => <code>{chunks}</code>,
          docs: (chunks) => <Link href="/api/docs">{chunks}</Link>,
        })}
      </p>
      <p>
        {t.rich('pages.replayPolicy', {
          code: (chunks) => <code>{chunks}</code>,
          strong: (chunks) => <strong>{chunks}</strong>,
        })}
      </p>
      <table className="matrix">
        <caption className="visually-hidden">{t('pages.caption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('pages.columns.type')}</th>
            <th scope="col">{t('pages.columns.status')}</th>
            <th scope="col">{t('pages.columns.means')}</th>
          </tr>
        </thead>
        <tbody>
          {types.map((type) => (
            <tr key={type}>
              <th scope="row">
                <Link href={problemTypeUri(type)}>{t(`types.${type}.name`)}</Link>
                <span className="small muted block">
                  <code>{type}</code>
                </span>
              </th>
              <td>{PROBLEM_TYPES[type].status}</td>
              <td className="small">{t.rich(`types.${type}.means`, { code: (chunks) => <code>{chunks}</code> })}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
