'use client';
// The lab's gateway section: in `npm run demo:cluster`, the gateway is nginx, and this shows the very file
// it runs with, written from these two settings. A change goes to the global lab settings (there is one
// gateway for everybody); within a second the launcher rewrites the file and runs `nginx -s reload`.
import { useFormatter, useTranslations } from 'next-intl';
import { type ReactNode, useState } from 'react';
import type { GatewayView } from '@/lib/lab/gateway';
import type { GatewaySettings } from '@/lib/lab/settings';
import { useEvery } from '@/lib/ui/use-polling';
import styles from './lab.module.css';

/** A time of day to the second, on a 24-hour clock (as the lab's lanes show it). */
export const CLOCK = { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' } as const;

/** The lines that decide whether a timed-out POST is sent to the other instance. */
const LESSON = /^\s*(proxy_next_upstream|proxy_next_upstream_tries|proxy_read_timeout)\b/;

export function useGateway(): {
  view: GatewayView | undefined;
  change: (patch: Partial<GatewaySettings>) => Promise<void>;
  error: string | undefined;
} {
  const [view, setView] = useState<GatewayView>();
  const [error, setError] = useState<string>();
  const t = useTranslations('lab.console');
  const read = async () => {
    const response = await fetch('/api/lab/gateway', { cache: 'no-store' });
    if (response.ok) setView((await response.json()) as GatewayView);
  };
  useEvery(1_000, read, { immediately: true });
  const change = async (patch: Partial<GatewaySettings>) => {
    // Shown at once; the file follows when nginx has reloaded.
    setView((current) => (current?.running ? { ...current, settings: { ...current.settings, ...patch } } : current));
    const response = await fetch('/api/lab/config?scope=global', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gateway: patch }),
    }).catch(() => undefined);
    setError(response?.ok ? undefined : t('gatewayNotSaved'));
  };
  return { view, change, error };
}

export function GatewayFile({ view }: { view: Extract<GatewayView, { running: true }> }) {
  const t = useTranslations('lab.console');
  const format = useFormatter();
  const reloaded = format.dateTime(new Date(view.reloadedAt), CLOCK);
  return (
    <figure className={styles.gatewayFile}>
      <figcaption>
        {t.rich('gatewayFile', {
          server: view.server,
          time: reloaded,
          file: view.file,
          code: (chunks: ReactNode) => <code>{chunks}</code>,
        })}
      </figcaption>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard */}
      <pre tabIndex={0}>
        {view.config.split('\n').map((line, index) =>
          LESSON.test(line) ? (
            // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one file, in order
            <mark key={index}>{`${line}\n`}</mark>
          ) : (
            `${line}\n`
          ),
        )}
      </pre>
    </figure>
  );
}
