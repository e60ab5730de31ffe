// RFC 9457 problem details: every error of every route has this shape, and never a stack trace.

import type { z } from 'zod';
import { faultyService } from './faults.ts';
import { hostAllowed } from './hosts.ts';
import { type ProblemType, problemTypeUri } from './problem-types.ts';

export type FieldError = { field: string; message: string };

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
};

/**
 * A problem response. Its `type` is the page that documents it (lib/http/problem-types.ts), also linked
 * as `Link: <…>; rel="describedby"`, as the Idempotency-Key draft suggests for its errors.
 */
export function problem(
  status: number,
  type: ProblemType,
  title: string,
  extra: Omit<Partial<Problem>, 'type' | 'title' | 'status'> = {},
  headers: HeadersInit = {},
): Response {
  const uri = problemTypeUri(type);
  const body: Problem = { type: uri, title, status, ...extra };
  const responseHeaders = new Headers(headers);
  responseHeaders.set('content-type', 'application/problem+json');
  responseHeaders.set('cache-control', 'no-store');
  responseHeaders.set('link', `<${uri}>; rel="describedby"; type="text/html"`);
  return new Response(JSON.stringify(body), { status, headers: responseHeaders });
}

/** Field errors from zod, with dotted paths ("lab.layers.token"); an unknown key is named itself. */
export function fieldErrors(error: z.ZodError): FieldError[] {
  const name = (path: PropertyKey[]) => (path.length > 0 ? path.map(String).join('.') : '(body)');
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: name([...issue.path, key]), message: 'is not a known field' }))
      : [{ field: name(issue.path), message: issue.message }],
  );
}

export function validationProblem(error: z.ZodError): Response {
  const errors = fieldErrors(error);
  const fields = [...new Set(errors.map((e) => e.field))].join(', ');
  return problem(400, 'validation', 'Invalid request', { detail: `Invalid field(s): ${fields}`, errors });
}

export function json(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  const responseHeaders = new Headers(headers);
  responseHeaders.set('cache-control', 'no-store');
  return Response.json(body, { status, headers: responseHeaders });
}

/**
 * Wraps a route handler so that an unexpected fault becomes a problem response: 503 naming the service
 * that is down, or a plain 500. The error is logged on the server; the body never carries a stack trace.
 */
export function withProblems<A extends unknown[]>(
  handler: (...args: A) => Promise<Response>,
): (...args: A) => Promise<Response> {
  return async (...args) => {
    // DNS rebinding: a page of another site, its name pointed at this machine, may call the API as if it
    // were its own; only the names this app serves are answered (pages: proxy.ts does the same).
    const [request] = args;
    if (request instanceof Request && !hostAllowed(request.headers.get('host'))) return hostRefused(request);
    try {
      return await handler(...args);
    } catch (error) {
      const service = faultyService(error);
      console.error(
        `[api] ${service ? `${service} unavailable: ` : ''}${error instanceof Error ? error.message : error}`,
      );
      if (service) {
        return problem(
          503,
          'service-unavailable',
          'Service unavailable',
          { detail: `${service} is unavailable; try again shortly`, service },
          { 'retry-after': '2' },
        );
      }
      return problem(500, 'internal', 'Internal error', { detail: 'Something went wrong on our side.' });
    }
  };
}

/** 421 for a request naming a host this app does not serve. */
export function hostRefused(request: Request): Response {
  const host = request.headers.get('host');
  return problem(421, 'host-not-allowed', 'Host not served here', {
    detail: `This server does not answer for ${host ?? 'no host'}.`,
  });
}
