import { env } from '@/lib/env';

/** The benchmark's ceiling: Next.js answering and nothing else. */
export async function GET(): Promise<Response> {
  if (!env().BENCH_ROUTES) return new Response(null, { status: 404 });
  return Response.json({ ok: true });
}
