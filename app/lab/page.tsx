import type { Metadata } from 'next';
import { cookies, headers } from 'next/headers';
import { notFound } from 'next/navigation';
import { getTranslations } from 'next-intl/server';
import { env } from '@/lib/env';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { getLabSettingsFor } from '@/lib/lab/settings-store';
import { readTimeline, viewerOf } from '@/lib/lab/timeline';
import { BANK_SETTLEMENT_WINDOW_MS, BANK_TIMEOUT_MS } from '@/lib/payments/bank';
import { ClientIdSchema, clientScope, sessionScope } from '@/lib/session';
import { LabConsole } from './lab-console';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('lab'))('title') };
}
export const dynamic = 'force-dynamic';

/** The first value of a query parameter, if it is a short plain word (it is only ever shown or matched). */
function param(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first !== undefined && /^[\w-]{1,40}$/.test(first) ? first : undefined;
}

/**
 * `?exercise=3` offers exercise 3's preset (the guide and /scenarios link here); loading the page never
 * applies it. `?order=ord_…` shows that order's lanes; `?client=<id>` the lanes of an X-Client-Id's requests.
 */
export default async function LabPage({ searchParams }: PageProps<'/lab'>) {
  if (!env().LAB_ENABLED) notFound();
  const query = await searchParams;
  // My lab: this browser session's own switches and lanes (each attendee of a workshop has one).
  const t = await getTranslations('lab');
  const session = sessionIdOf(await cookies(), await headers());
  const me = session ? sessionScope(session) : undefined;
  // `?client=<id>`: the lanes of the guide's commands, sent as X-Client-Id <id> ($ME), instead of this browser's.
  const client = ClientIdSchema.safeParse([query.client].flat()[0]).data;
  const viewer = client !== undefined ? clientScope(client) : me;
  const [settings, events] = await Promise.all([
    getLabSettingsFor(me),
    readTimeline(undefined, 200, viewer ? viewerOf(viewer) : undefined),
  ]);
  return (
    <LabConsole
      heading={<h1 title={t('headingTitle')}>{t('title')}</h1>}
      initialSettings={settings}
      initialEvents={events}
      bankTimeoutMs={BANK_TIMEOUT_MS}
      settlementWindowMs={BANK_SETTLEMENT_WINDOW_MS}
      initialExercise={param(query.exercise)}
      initialOrder={param(query.order)}
      client={client}
    />
  );
}
