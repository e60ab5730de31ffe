import type { Metadata } from 'next';
import { headers } from 'next/headers';
import { getTranslations } from 'next-intl/server';
import { SlideDeck } from './slide-deck';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('workshop'))('slidesTitle') };
}

/** How many slides messages/<locale>/workshop.json holds (slides.1 … slides.7). */
const SLIDES = ['1', '2', '3', '4', '5', '6', '7'] as const;

/**
 * The opening slides, served by the app (no CDN, nothing to install): the article's story, its four sources of
 * duplicates and four schemes, the demo's five layers, the three details, the invariant. The first names the
 * room's address, the one this page was opened at.
 */
export default async function SlidesPage() {
  const t = await getTranslations('workshop');
  const host = (await headers()).get('host') ?? 'localhost:3000';
  const slides = SLIDES.map((n) => ({
    title: t(`slides.${n}.title`),
    lines: t(`slides.${n}.body`, { address: `http://${host}` }).split('\n'),
  }));
  const words = {
    slideOf: SLIDES.map((_, n) => t('slideOf', { n: n + 1, count: SLIDES.length })),
    next: t('next'),
    previous: t('previous'),
    help: t.rich('slidesHelp', { code: (keys) => <kbd>{keys}</kbd> }),
  };
  return <SlideDeck slides={slides} words={words} />;
}
