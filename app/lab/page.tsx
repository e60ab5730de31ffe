import type { Metadata } from 'next';
import { cookies, headers } from 'next/headers';
import { notFound } from 'next/navigation';
import { env } from '@/lib/env';
import { sessionIdOf } from '@/lib/http/session-cookie';
import { getLabSettingsFor } from '@/lib/lab/settings-store';
import { readTimeline, viewerOf } from '@/lib/lab/timeline';
import { BANK_SETTLEMENT_WINDOW_MS, BANK_TIMEOUT_MS } from '@/lib/payments/bank';
import { sessionScope } from '@/lib/session';
import { LabConsole } from './lab-console';

export const metadata: Metadata = { title: 'Lab' };
export const dynamic = 'force-dynamic';

export default async function LabPage() {
  if (!env().LAB_ENABLED) notFound();
  // My lab: this browser session's own switches and lanes (each attendee of a workshop has one).
  const session = sessionIdOf(await cookies(), await headers());
  const me = session ? sessionScope(session) : undefined;
  const [settings, events] = await Promise.all([
    getLabSettingsFor(me),
    readTimeline(undefined, 200, me ? viewerOf(me) : undefined),
  ]);
  return (
    <>
      <h1>Lab</h1>
      <p>
        Switch a defence off, pay in another tab, and watch which layer stops the duplicate, or how the card gets
        charged twice. This is your own lab: its switches apply at once to the checkouts you start (in every tab of this
        browser), and nobody else’s; the timeline shows your requests. Orders created with their own <code>lab</code>{' '}
        settings (the scenarios do this) keep them.
      </p>
      <LabConsole
        initialSettings={settings}
        initialEvents={events}
        bankTimeoutMs={BANK_TIMEOUT_MS}
        settlementWindowMs={BANK_SETTLEMENT_WINDOW_MS}
      />
    </>
  );
}
