import { getLocale, getTranslations } from 'next-intl/server';
import type { ReactNode } from 'react';
import type { Locale } from '@/lib/i18n/locales';
import { handoutOf, readWorkshopDocument, renderWorkshopDocument, type WorkshopDocument } from '@/lib/workshop/guide';

/** The workshop's pages, one beside the other. */
export async function WorkshopNav() {
  const t = await getTranslations('workshop');
  const link = (href: string) => (words: ReactNode) => <a href={href}>{words}</a>;
  return (
    <nav className="workshop-nav small" aria-label={t('guideTitle')}>
      {t.rich('nav', {
        guide: link('/workshop'),
        handout: link('/workshop/handout'),
        facilitator: link('/workshop/facilitator'),
        slides: link('/workshop/slides'),
      })}
    </nav>
  );
}

/**
 * One of the repository's workshop documents as a page, in the reader's language, its links this app's own.
 * `handout`: the guide with the answers left out (lib/workshop/guide.ts).
 */
export async function WorkshopDocumentPage({ name, handout = false }: { name: WorkshopDocument; handout?: boolean }) {
  const locale = (await getLocale()) as Locale;
  const t = await getTranslations('workshop');
  const source = await readWorkshopDocument(name, locale);
  const html = renderWorkshopDocument(handout ? handoutOf(source) : source);
  return (
    <>
      <WorkshopNav />
      {handout ? <p className="muted handout-intro">{t('handoutIntro')}</p> : null}
      <article
        className={`workshop-document${handout ? ' handout' : ''}`}
        // The repository's own Markdown, rendered on the server: no visitor's text reaches it.
        // biome-ignore lint/security/noDangerouslySetInnerHtml: see above
        dangerouslySetInnerHTML={{ __html: html }}
      />
    </>
  );
}
