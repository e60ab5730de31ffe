'use client';
import { useEffect, useRef, useState } from 'react';

/**
 * Runs `tick` every `intervalMs` (after the previous one finished), from mount to unmount. A failed tick is
 * ignored: the server may be restarting (the lab's crash fault kills it on purpose), and the next one retries.
 */
export function useEvery(intervalMs: number, tick: () => Promise<void>, options: { immediately?: boolean } = {}): void {
  const latest = useRef(tick);
  latest.current = tick;
  const immediately = options.immediately ?? false;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      await latest.current().catch(() => {});
      if (!stopped) timer = setTimeout(run, intervalMs);
    };
    timer = setTimeout(run, immediately ? 0 : intervalMs);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [intervalMs, immediately]);
}

/**
 * Fetches `url` as JSON now and every `intervalMs`, keeping the last good answer. Polling (rather than a
 * socket) keeps every open tab in step with Redis and PostgreSQL with nothing to reconnect.
 */
export function usePolling<T>(url: string | null, intervalMs: number, initial?: T): T | undefined {
  const [data, setData] = useState<T | undefined>(initial);
  useEvery(
    intervalMs,
    async () => {
      if (!url) return;
      const response = await fetch(url, { cache: 'no-store' });
      if (response.ok) setData((await response.json()) as T);
    },
    { immediately: true },
  );
  return data;
}
