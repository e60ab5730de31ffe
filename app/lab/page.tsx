import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { env } from '@/lib/env';
import { getLabSettings } from '@/lib/lab/settings-store';
import { readTimeline } from '@/lib/lab/timeline';
import { BANK_SETTLEMENT_WINDOW_MS, BANK_TIMEOUT_MS } from '@/lib/payments/bank';
import { LabConsole } from './lab-console';

export const metadata: Metadata = { title: 'Lab' };
export const dynamic = 'force-dynamic';

export default async function LabPage() {
  if (!env().LAB_ENABLED) notFound();
  const [settings, events] = await Promise.all([getLabSettings(), readTimeline(undefined)]);
  return (
    <>
      <h1>Lab</h1>
      <p>
        Switch a defence off, pay in another tab, and watch which layer stops the duplicate, or how the card gets
        charged twice. Changes apply at once, to every instance and every open tab. Orders created with their own{' '}
        <code>lab</code> settings (the scenarios do this) keep them.
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
