import 'server-only';
// What the Node server does with a request before Next.js sees it: two things Next.js cannot do itself.
//
// 1. The peer. Next.js passes the client's own X-Forwarded-For on (it only adds the socket's address when
//    there is none), so a route cannot tell a caller's address from one it made up. Every request gets the
//    socket's address in PEER_HEADER, over anything the client sent under that name; lib/http/client-address.ts
//    reads it (and X-Forwarded-For only behind a gateway named in TRUSTED_PROXIES).
// 2. The methods the web's Request cannot carry (the Fetch standard forbids TRACE, TRACK and CONNECT; Node's
//    HTTP parser refuses TRACK itself with a 400): Next.js builds a Request for every request it serves, and
//    for TRACE it throws ("'TRACE' HTTP method is unsupported") and answers a bare 500 before the proxy or any
//    route runs; CONNECT goes to a server's `connect` listeners, and without one the connection is closed
//    unanswered; and a page rendered itself for PUT or PROPFIND. So the Node server answers every method a
//    target does not take first: 405, with the target's Allow and a problem, as a route answers a method it
//    does not take (a page's OPTIONS: 204 with Allow).
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { PEER_HEADER } from './client-address.ts';
import { pathDecodes } from './edge.ts';
import { allowHeader, type Method } from './methods.ts';
import { openApiDocument } from './openapi.ts';
import { problem, say } from './problem.ts';

/** The methods the API's routes answer themselves (lib/http/methods.ts: 405 or 204 for those they do not take). */
const ROUTE_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A page takes GET (and HEAD) and its forms' posts. */
const PAGE_METHODS: Method[] = ['GET', 'POST'];
const PAGE_TAKES = new Set(['GET', 'HEAD', 'POST']);

/** Under /api/ but not the API reference's page: a route, which answers the usual methods itself. */
const isRoute = (pathname: string) => pathname.startsWith('/api/') && pathname !== '/api/docs';

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
  if (isRoute(pathname)) {
    const route = routes().find(({ pattern }) => pattern.test(pathname));
    if (route) return allowHeader(route.methods);
  }
  return allowHeader(PAGE_METHODS);
}

/** The 405 problem for a method this target does not take. */
function methodNotAllowed(request: http.IncomingMessage): Response {
  const allow = allowedAt(request.url ?? '/');
  return problem(
    405,
    'method-not-allowed',
    'Method not allowed',
    { detail: say('details.methodNotAllowed', { method: request.method ?? '', allow }), allow: allow.split(', ') },
    { allow },
  );
}

/**
 * Whether Next.js would mishandle this method here: TRACE and TRACK anywhere (a bare 500); on a page anything
 * but GET, HEAD and POST (Next.js renders the page for PUT or PROPFIND, and answers OPTIONS 400); on a route
 * a method outside the usual seven (Next.js answers PROPFIND 400, with no Allow).
 */
export function answeredHere(method: string, path: string): boolean {
  return isRoute(path.split('?')[0] ?? '/') ? !ROUTE_METHODS.has(method) : !PAGE_TAKES.has(method);
}

async function refuse(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  // A path that does not decode is refused as proxy.ts refuses it, whatever the method.
  if (!pathDecodes((request.url ?? '/').split('?')[0] ?? '/')) {
    const answer = problem(400, 'bad-path', 'Malformed address', {
      detail: 'The path is not valid percent-encoded UTF-8.',
    });
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    response.end(await answer.text());
    return;
  }
  // A page's OPTIONS: what it takes, as a route's OPTIONS says (204, Allow).
  if (request.method === 'OPTIONS') {
    response.writeHead(204, { allow: allowedAt(request.url ?? '/'), 'cache-control': 'no-store' });
    response.end();
    return;
  }
  const answer = methodNotAllowed(request);
  response.writeHead(answer.status, Object.fromEntries(answer.headers));
  response.end(await answer.text());
}

/**
 * CONNECT (a tunnel, for proxies): Node.js hands it to a server's `connect` listeners, and without one closes
 * the connection unanswered. This server is no proxy: 405 on the raw socket, then the connection closes.
 */
async function refuseConnect(request: http.IncomingMessage, socket: Duplex): Promise<void> {
  const answer = methodNotAllowed(request);
  const body = Buffer.from(await answer.text());
  const headers = [...answer.headers, ['content-length', String(body.byteLength)], ['connection', 'close']];
  socket.end(
    Buffer.concat([
      Buffer.from(
        `HTTP/1.1 405 Method Not Allowed\r\n${headers.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`,
      ),
      body,
    ]),
  );
}

/**
 * In every HTTP server of this process, before Next.js sees a request: stamps its peer's address, and answers
 * the methods Next.js would mishandle (answeredHere) and CONNECT. Once per process.
 */
export function guardNodeServer(): void {
  const registry = globalThis as { nodeServerGuarded?: boolean };
  if (registry.nodeServerGuarded) return;
  registry.nodeServerGuarded = true;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
    // On 'listening', or on the first request when the server was listening before this hook was set.
    if ((event === 'listening' || event === 'request') && this.listenerCount('connect') === 0) {
      this.on('connect', (request: http.IncomingMessage, socket: Duplex) => {
        void refuseConnect(request, socket).catch(() => socket.destroy());
      });
    }
    const [request, response] = args as [http.IncomingMessage, http.ServerResponse];
    if (event === 'request') {
      request.headers[PEER_HEADER] = request.socket.remoteAddress ?? 'unknown';
      if (answeredHere(request.method ?? '', request.url ?? '/')) {
        void refuse(request, response).catch(() => response.destroy());
        return true;
      }
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof emit;
}
