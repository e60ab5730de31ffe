// What an API route answers to a method it does not take: 405 with Allow and a problem body (Next.js's own
// answer is an empty 405 without Allow), and OPTIONS naming what it does take. Each route exports the rest:
//   export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'POST');
import { inLanguageOf, problem, say } from './problem.ts';

/** The methods a route handler can export (Next.js answers others, such as PROPFIND, with an empty 400). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof METHODS)[number];

type Handler = (request: Request) => Response;

/** The methods a route does not take, given those it does. A GET route answers HEAD too (Next.js runs GET for it). */
type Others<Allowed extends Method> = Exclude<Method, Allowed | ('GET' extends Allowed ? 'HEAD' : never)>;

/** The Allow header of a route taking `allowed`. */
export function allowHeader(allowed: readonly Method[]): string {
  const all = new Set<string>([...allowed, 'OPTIONS']);
  if (all.has('GET')) all.add('HEAD');
  return [...METHODS.filter((method) => all.has(method)), 'OPTIONS'].join(', ');
}

/** A 405 problem for a route that takes `allowed`. */
export function methodNotAllowed(allowed: readonly Method[]): Handler {
  const allow = allowHeader(allowed);
  return (request) =>
    inLanguageOf(request, () =>
      problem(
        405,
        'method-not-allowed',
        'Method not allowed',
        { detail: say('details.methodNotAllowed', { method: request.method, allow }), allow: allow.split(', ') },
        { allow },
      ),
    );
}

/** Handlers for every method a route does not take (405), and OPTIONS (204, Allow). */
export function otherMethods<Allowed extends Method>(
  ...allowed: Allowed[]
): Record<Others<Allowed>, Handler> & { OPTIONS: Handler } {
  const refuse = methodNotAllowed(allowed);
  const allow = allowHeader(allowed);
  const options: Handler = () => new Response(null, { status: 204, headers: { allow, 'cache-control': 'no-store' } });
  const handlers: Record<string, Handler> = { OPTIONS: options };
  for (const method of METHODS) {
    if (
      !(allowed as readonly Method[]).includes(method) &&
      !(method === 'HEAD' && allowed.includes('GET' as Allowed))
    ) {
      handlers[method] = refuse;
    }
  }
  return handlers as Record<Others<Allowed>, Handler> & { OPTIONS: Handler };
}
