import { otherMethods } from '@/lib/http/methods';
import { openApiDocument } from '@/lib/http/openapi';

/** The API reference as OpenAPI 3.1 (rendered for people at /api/docs). */
export function GET(): Response {
  return Response.json(openApiDocument(), { headers: { 'cache-control': 'public, max-age=60' } });
}

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
