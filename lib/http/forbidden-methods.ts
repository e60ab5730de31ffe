import 'server-only';
// The methods the web's Request cannot carry (the Fetch standard forbids TRACE and TRACK; Node's HTTP parser
// refuses TRACK itself with a 400, and CONNECT never comes as a request): Next.js builds a Request for every
// request it serves, and for TRACE it throws ("'TRACE' HTTP method is unsupported") and answers a bare 500
// before the proxy or any route runs. So the Node server answers it first: 405, with the target's Allow and a
// problem, as a route answers a method it does not take.
import http from 'node:http';
import { allowHeader, type Method } from './methods.ts';
import { openApiDocument } from './openapi.ts';
import { problem, say } from './problem.ts';

const FORBIDDEN = new Set(['TRACE', 'TRACK']);

/** A page takes GET (and HEAD) and its forms' posts. */
const PAGE_METHODS: Method[] = ['GET', 'POST'];

let apiRoutes: Array<{ pattern: RegExp; methods: Method[] }> | undefined;

/** The API's paths and their methods, from the OpenAPI document the API reference is made of. */
function routes(): Array<{ pattern: RegExp; methods: Method[] }> {
  apiRoutes ??= Object.entries(openApiDocument().paths as Record<string, Record<string, unknown>>).map(
    ([path, operations]) => ({
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
      methods: Object.keys(operations)
        .map((method) => method.toUpperCase())
        .filter((method): method is Method => ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)),
    }),
  );
  return apiRoutes;
}

/** The Allow of a path: an API route's methods, or a page's. */
export function allowedAt(path: string): string {
  const pathname = path.split('?')[0] ?? '/';
  if (pathname.startsWith('/api/') && pathname !== '/api/docs') {
    const route = routes().find(({ pattern }) => pattern.test(pathname));
    if (route) return allowHeader(route.methods);
  }
  return allowHeader(PAGE_METHODS);
}

async function refuse(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const allow = allowedAt(request.url ?? '/');
  const answer = problem(
    405,
    'method-not-allowed',
    'Method not allowed',
    { detail: say('details.methodNotAllowed', { method: request.method ?? '', allow }), allow: allow.split(', ') },
    { allow },
  );
  response.writeHead(answer.status, Object.fromEntries(answer.headers));
  response.end(await answer.text());
}

/**
 * Answers TRACE (and TRACK, should a parser let it through) in every HTTP server of this process, before
 * Next.js sees it. Once per process.
 */
export function refuseForbiddenMethods(): void {
  const registry = globalThis as { forbiddenMethodsRefused?: boolean };
  if (registry.forbiddenMethodsRefused) return;
  registry.forbiddenMethodsRefused = true;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
    const [request, response] = args as [http.IncomingMessage, http.ServerResponse];
    if (event === 'request' && FORBIDDEN.has(request.method ?? '')) {
      void refuse(request, response).catch(() => response.destroy());
      return true;
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof emit;
}
