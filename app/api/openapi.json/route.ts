import { hostAllowed } from '@/lib/http/hosts';
import { otherMethods } from '@/lib/http/methods';
import { openApiDocument } from '@/lib/http/openapi';
import { hostRefused } from '@/lib/http/problem';

/** The API reference as OpenAPI 3.1 (rendered for people at /api/docs). */
export function GET(request: Request): Response {
  if (!hostAllowed(request.headers.get('host'))) return hostRefused(request);
  return Response.json(openApiDocument(), { headers: { 'cache-control': 'public, max-age=60' } });
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
