import type { NextRequest } from 'next/server';
import { z } from 'zod';
import { readJsonBody } from '@/lib/http/body';
import { missingSession, sessionCallerOf } from '@/lib/http/caller';
import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { presenterOnly } from '@/lib/http/presenter';
import { isPresenter } from '@/lib/http/presenter-session';
import { json, problem, say, validationProblem, withProblems } from '@/lib/http/problem';
import { limitRate } from '@/lib/http/rate-limit';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { BrowserEventSchema } from '@/lib/lab/browser-event';
import { recordSwallowedClick } from '@/lib/lab/swallowed-click';
import { clearTimeline, readTimeline, viewerOf } from '@/lib/lab/timeline';
import { ClientIdSchema, clientScope } from '@/lib/session';

const MAX_U64 = 2n ** 64n - 1n;

/**
 * A Redis stream id: two unsigned 64-bit integers ("1796005479337-0"); Redis refuses anything larger. `after`
 * is exclusive, and nothing comes after the largest id: Redis refuses "(18446744073709551615-18446744073709551615".
 */
const StreamIdSchema = z.string().refine(
  // One check: Zod runs every refinement even after a failed regex, and BigInt throws on non-digits.
  (id) => {
    if (!/^\d{1,20}-\d{1,20}$/.test(id)) return false;
    const parts = id.split('-').map((part) => BigInt(part));
    return parts.every((part) => part <= MAX_U64) && !parts.every((part) => part === MAX_U64);
  },
  { message: 'must be a stream id below the largest one' },
);

const QuerySchema = z.object({ after: StreamIdSchema.optional(), client: ClientIdSchema.optional() });

/**
 * The lab's timeline, polled by every open lab tab: `?after=<id>` returns only what is new. A browser session
 * sees its own lanes (its requests, and those on its orders); `?client=<id>`, those of an X-Client-Id;
 * `?scope=room`, or any other caller, sees everyone's: the presenter's view when the app is exposed.
 */
export const GET = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  const params = request.nextUrl.searchParams;
  const query = QuerySchema.safeParse({
    after: params.get('after') ?? undefined,
    client: params.get('client') ?? undefined,
  });
  if (!query.success) return validationProblem(query.error);
  // `?client=<id>`: the lanes of the commands an attendee runs as X-Client-Id <id> (the guide's $ME), which
  // anyone naming that id may read, as they may read its orders (lib/session.ts: the id is taken at its word).
  const { after, client } = query.data;
  if (client !== undefined) return json({ events: await readTimeline(after, 200, viewerOf(clientScope(client))) });
  const session = params.get('scope') === 'room' ? undefined : sessionCallerOf(request);
  if (!session && !(await isPresenter(request))) return presenterOnly('readEveryonesTimeline');
  return json({ events: await readTimeline(after, 200, session ? viewerOf(session) : undefined) });
});

export const DELETE = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled() ?? refuseCrossSite(request);
  if (disabled) return disabled;
  if (!(await isPresenter(request))) return presenterOnly('deleteTimeline');
  await clearTimeline();
  return new Response(null, { status: 204 });
});

/**
 * What only the browser sees, reported by the checkout page (lib/ui/report-swallowed-click.ts): a click the
 * pending UI swallowed (layer 0). It becomes a lane of its own, "0 Pending UI stopped", in the lab of the
 * page's session and of the order's owner. 204; 404 for an order this session may not use.
 */
export const POST = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled() ?? refuseCrossSite(request);
  if (disabled) return disabled;
  const session = sessionCallerOf(request);
  if (!session) return missingSession('missingCallerTimeline');
  const limited = await limitRate('clicks', session, request.headers);
  if (limited) return limited;
  const body = await readJsonBody(request, BrowserEventSchema);
  if (!body.ok) return body.response;
  const { orderNo } = body.value;
  if (!(await recordSwallowedClick(orderNo, session))) {
    return problem(404, 'order-not-found', 'Order not found', { detail: say('details.orderNotFound', { orderNo }) });
  }
  return new Response(null, { status: 204 });
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { PUT, PATCH, OPTIONS } = otherMethods('GET', 'POST', 'DELETE');
