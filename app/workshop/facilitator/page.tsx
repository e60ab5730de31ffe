import type { Metadata } from 'next';
import { getTranslations } from 'next-intl/server';
import { WorkshopDocumentPage } from '../workshop-document';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('workshop'))('facilitatorTitle') };
}

/** The facilitator's plan (docs/facilitator.md): 90 minutes, who does what, what to say, what people ask. */
export default function FacilitatorPage() {
  return <WorkshopDocumentPage name="facilitator" />;
}
