import { env } from '@/lib/env';
import { otherMethods } from '@/lib/http/methods';

/** The benchmark's ceiling: Next.js answering and nothing else. */
export async function GET(): Promise<Response> {
  if (!env().BENCH_ROUTES) return new Response(null, { status: 404 });
  return Response.json({ ok: true });
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
