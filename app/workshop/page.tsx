import type { Metadata } from 'next';
import { getTranslations } from 'next-intl/server';
import { WorkshopDocumentPage } from './workshop-document';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('workshop'))('guideTitle') };
}

/** The workshop guide (docs/workshop.md), served: its exercise links open this app's lab, at the room's address. */
export default function WorkshopPage() {
  return <WorkshopDocumentPage name="workshop" />;
}
