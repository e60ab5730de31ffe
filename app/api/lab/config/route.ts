import type { NextRequest } from 'next/server';
import { readJsonBody } from '@/lib/http/body';
import { callerOf, sessionCallerOf } from '@/lib/http/caller';
import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { isExposed, presenterOnly, sharedFaultsIn } from '@/lib/http/presenter';
import { isPresenter } from '@/lib/http/presenter-session';
import { json, problem, say, withProblems } from '@/lib/http/problem';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { followingOf } from '@/lib/lab/room-steering';
import { LabSettingsPatchSchema } from '@/lib/lab/settings';
import {
  getLabSettings,
  getLabSettingsFor,
  getOrderLabSettings,
  updateLabSettings,
  updateMyLabSettings,
} from '@/lib/lab/settings-store';
import { OrderNoSchema } from '@/lib/payments/order-no';
import { orderUsableBy } from '@/lib/payments/orders';
import type { CallerScope } from '@/lib/session';

/**
 * Which lab a request reads or changes: a browser session's own (each attendee of a workshop has one), unless
 * it asks for `?scope=global`; any other caller, the global settings (the default of every new session).
 */
function scopeOf(request: NextRequest): { session?: CallerScope } {
  if (request.nextUrl.searchParams.get('scope') === 'global') return {};
  return { session: sessionCallerOf(request) };
}

/** My lab (or the global one); with `?orderNo=`, the settings that order runs with (its own win). */
export const GET = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  const orderNo = request.nextUrl.searchParams.get('orderNo');
  if (orderNo === null) {
    const { session } = scopeOf(request);
    if (!session) return json(await getLabSettings(), 200, { 'x-lab-scope': 'global' });
    // Whether this lab follows the room (the presenter's "for everyone"), and the exercise the room is on.
    const [settings, room] = await Promise.all([getLabSettingsFor(session), followingOf(session)]);
    return json(settings, 200, {
      'x-lab-scope': 'mine',
      'x-lab-follows-room': room.follows ? 'yes' : 'no',
      ...(room.exercise ? { 'x-lab-room-exercise': room.exercise.id } : {}),
    });
  }
  const who = callerOf(request);
  const usable =
    OrderNoSchema.safeParse(orderNo).success && (await orderUsableBy(orderNo, who.ok ? who.caller : undefined));
  const settings = usable ? await getOrderLabSettings(orderNo) : undefined;
  return settings
    ? json(settings)
    : problem(404, 'order-not-found', 'Order not found', { detail: say('details.orderNotFound', { orderNo }) });
});

/** Merges a partial object into my lab (or, the presenter's action, into the global one) and returns the whole. */
export const PUT = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled() ?? refuseCrossSite(request);
  if (disabled) return disabled;
  const { session } = scopeOf(request);
  if (!session && !(await isPresenter(request))) return presenterOnly('changeGlobalLab');
  const body = await readJsonBody(request, LabSettingsPatchSchema);
  if (!body.ok) return body.response;
  if (isExposed() && sharedFaultsIn(body.value) && !(await isPresenter(request))) {
    return presenterOnly('stopTheApp');
  }
  const settings = session ? await updateMyLabSettings(session, body.value) : await updateLabSettings(body.value);
  return json(settings, 200, { 'x-lab-scope': session ? 'mine' : 'global' });
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'PUT');
