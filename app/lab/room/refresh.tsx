'use client';
import { useRouter } from 'next/navigation';
import { useEvery } from '@/lib/ui/use-polling';

/** Re-renders the room's summary every few seconds (the timeline below polls on its own). */
export function RefreshEvery({ ms }: { ms: number }) {
  const router = useRouter();
  useEvery(ms, async () => router.refresh());
  return null;
}
