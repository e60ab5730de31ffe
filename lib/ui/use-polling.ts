'use client';
import { useEffect, useState } from 'react';

/**
 * Fetches `url` as JSON now and every `intervalMs`, keeping the last good answer. Polling (rather than a
 * socket) keeps every open tab in step with Redis and PostgreSQL with nothing to reconnect.
 */
export function usePolling<T>(url: string | null, intervalMs: number, initial?: T): T | undefined {
  const [data, setData] = useState<T | undefined>(initial);
  useEffect(() => {
    if (!url) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const response = await fetch(url, { cache: 'no-store' });
        if (response.ok && !stopped) setData((await response.json()) as T);
      } catch {
        // The server is restarting (say, after the lab's crash fault): try again at the next tick.
      }
      if (!stopped) timer = setTimeout(tick, intervalMs);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [url, intervalMs]);
  return data;
}
