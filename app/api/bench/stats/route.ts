import { databaseRoundTrips } from '@/lib/db';
import { env } from '@/lib/env';
import { otherMethods } from '@/lib/http/methods';

/** Database round trips this instance made since it started: the benchmark's cost per payment. */
export async function GET(): Promise<Response> {
  if (!env().BENCH_ROUTES) return new Response(null, { status: 404 });
  return Response.json({ databaseRoundTrips: databaseRoundTrips.count });
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
