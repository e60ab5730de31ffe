import { openApiDocument } from '@/lib/http/openapi';

/** The API reference as OpenAPI 3.1 (rendered for people at /api/docs). */
export function GET(): Response {
  return Response.json(openApiDocument(), { headers: { 'cache-control': 'public, max-age=60' } });
}
