// The caller of an API route: the X-Client-Id header for services, else the browser's session cookie.
// Request keys and tokens are scoped by it, so one caller never sees another's. A cookie the server did not
// sign (chosen, forged, from another secret) is no session: the request has no caller.
import type { NextRequest } from 'next/server';
import { type CallerScope, ClientIdSchema, clientScope, sessionScope } from '../session.ts';
import { problem, say } from './problem.ts';
import { sessionIdOf } from './session-cookie.ts';

export function callerOf(request: NextRequest): { ok: true; caller: CallerScope } | { ok: false; response: Response } {
  const clientId = request.headers.get('x-client-id');
  if (clientId !== null) {
    const parsed = ClientIdSchema.safeParse(clientId);
    if (!parsed.success) {
      const message = parsed.error.issues[0]?.message ?? 'is invalid';
      return {
        ok: false,
        response: problem(400, 'invalid-client-id', 'Invalid X-Client-Id', {
          detail: say('details.invalidClientId', { message }),
          errors: [{ field: 'X-Client-Id', message }],
        }),
      };
    }
    return { ok: true, caller: clientScope(parsed.data) };
  }
  const session = sessionIdOf(request.cookies, request.headers);
  if (session) return { ok: true, caller: sessionScope(session) };
  return {
    ok: false,
    response: problem(400, 'missing-caller', 'Who is calling?', {
      detail: say('details.missingCaller'),
      errors: [{ field: 'X-Client-Id', message: say('fields.isRequired') }],
    }),
  };
}

/**
 * The browser session behind a request that names no X-Client-Id: whose own lab it reads and changes. A
 * service (or a request that names nobody) has none.
 */
export function sessionCallerOf(request: NextRequest): CallerScope | undefined {
  if (request.headers.has('x-client-id')) return undefined;
  const session = sessionIdOf(request.cookies, request.headers);
  return session ? sessionScope(session) : undefined;
}

/**
 * 400 for a request that must come from a browser session and did not (a service, or no cookie): `detail`,
 * the message of problems.json's details that says why this route is a browser's.
 */
export function missingSession(detail: 'missingCallerTimeline' | 'missingCallerFollow'): Response {
  return problem(400, 'missing-caller', 'Who is calling?', {
    detail: say(`details.${detail}`),
    errors: [{ field: 'Cookie', message: say('fields.sessionOfCheckout') }],
  });
}
