'use client';
import { useCallback, useEffect, useRef, useState } from 'react';

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
  return usePollingNow(url, intervalMs, initial).data;
}

/** usePolling, with `now()`: one more fetch at once, for a page that knows the answer has just changed. */
export function usePollingNow<T>(
  url: string | null,
  intervalMs: number,
  initial?: T,
): { data: T | undefined; now: () => void } {
  const [data, setData] = useState<T | undefined>(initial);
  const fetchOnce = useRef(async () => {});
  fetchOnce.current = async () => {
    if (!url) return;
    const response = await fetch(url, { cache: 'no-store' });
    if (response.ok) setData((await response.json()) as T);
  };
  useEvery(intervalMs, () => fetchOnce.current(), { immediately: true });
  const now = useCallback(() => {
    fetchOnce.current().catch(() => {});
  }, []);
  return { data, now };
}
