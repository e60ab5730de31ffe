import 'server-only';
import { newRequestId } from '../instance.ts';
import { withProblems } from './problem.ts';

/**
 * A service route's POST: the request gets its lane on the lab's timeline (X-Request-Id on every response), its
 * faults become problems (`withProblems`), and a 4xx no defence answered says `X-Answered-By: request`: the request
 * itself was refused (400/404/413/422).
 */
export function serviceRoute<R extends Request>(
  handler: (request: R, laneId: string) => Promise<Response>,
): (request: R) => Promise<Response> {
  const handle = withProblems(handler);
  return async (request) => {
    const laneId = newRequestId();
    const response = await handle(request, laneId);
    response.headers.set('x-request-id', laneId);
    if (response.status >= 400 && response.status < 500 && !response.headers.has('x-answered-by')) {
      response.headers.set('x-answered-by', 'request');
    }
    return response;
  };
}
