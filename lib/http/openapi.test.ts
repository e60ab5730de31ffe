// The API reference validates as OpenAPI 3.1 with a real validator, and covers every route of the API.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from './openapi.ts';

/** The API's routes, from app/api's folders: `[orderNo]` becomes `{orderNo}`. */
function apiRoutes(dir = path.join(import.meta.dirname, '../../app/api'), prefix = '/api'): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (!statSync(full).isDirectory()) return name === 'route.ts' ? [prefix] : [];
    return apiRoutes(full, `${prefix}/${name.replace(/^\[(.+)\]$/, '{$1}')}`);
  });
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 (swagger-parser)', async () => {
    const document = structuredClone(openApiDocument());
    await expect(SwaggerParser.validate(document as never)).resolves.toBeTruthy();
    expect(document.openapi).toBe('3.1.0');
  });

  it('documents every route of the API (but the benchmark’s, its own, and the 404 for every other address)', () => {
    const documented = Object.keys(openApiDocument().paths ?? {}).sort();
    const routes = apiRoutes()
      .filter((route) => !route.startsWith('/api/bench') && route !== '/api/openapi.json' && route !== '/api/{...path}')
      .sort();
    expect(documented).toEqual(routes);
  });
});
