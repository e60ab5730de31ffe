import type { Metadata } from 'next';
import { getLocale, getTranslations } from 'next-intl/server';
import { GLOSSARY } from '@/lib/i18n/glossary';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('glossary'))('title') };
}

/** The article's terms beside the demo's: the layer each names, and the code that implements it. */
export default async function GlossaryPage() {
  const t = await getTranslations('glossary');
  const locale = await getLocale();
  // The reader's language first; the other column is the one to look up in the article (or in the demo).
  const columns = locale === 'zh-CN' ? (['zh', 'en'] as const) : (['en', 'zh'] as const);
  return (
    <>
      <h1>{t('title')}</h1>
      <p>{t('intro')}</p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard */}
      <section className="table-scroll" tabIndex={0} aria-label={t('title')}>
        <table className="matrix glossary">
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column} scope="col">
                  {t(`columns.${column}`)}
                </th>
              ))}
              <th scope="col">{t('columns.layer')}</th>
              <th scope="col">{t('columns.meaning')}</th>
              <th scope="col">{t('columns.code')}</th>
            </tr>
          </thead>
          <tbody>
            {GLOSSARY.map((entry) => (
              <tr key={entry.id} id={entry.id}>
                {columns.map((column, index) =>
                  index === 0 ? (
                    <th key={column} scope="row" lang={column === 'zh' ? 'zh-CN' : 'en'}>
                      {entry[column]}
                    </th>
                  ) : (
                    <td key={column} lang={column === 'zh' ? 'zh-CN' : 'en'}>
                      {entry[column]}
                    </td>
                  ),
                )}
                <td>{entry.layer === undefined ? t('noLayer') : t('layer', { layer: entry.layer })}</td>
                <td>
                  {t.rich(`entries.${entry.id}` as 'entries.idempotency', { code: (chunks) => <code>{chunks}</code> })}
                </td>
                <td>
                  {entry.code.map((file) => (
                    <code key={file} className="glossary-code">
                      {file}
                    </code>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
