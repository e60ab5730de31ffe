import type { Metadata } from 'next';
import { getTranslations } from 'next-intl/server';
import { WorkshopDocumentPage } from '../workshop-document';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('workshop'))('handoutTitle') };
}

/** The handout: each exercise's situation, prediction and steps, the answers left out; printable. */
export default function HandoutPage() {
  return <WorkshopDocumentPage name="workshop" handout />;
}
