import 'server-only';
// Layer 0 on the timeline. The pending UI stops a second click in the browser, so no request ever reaches the
// server and the lab had nothing to draw: the page reports the click it swallowed, and it gets a lane of its
// own that ends at layer 0. Nothing else is done with it.
import { getDb } from '../db.ts';
import { instanceName, newRequestId } from '../instance.ts';
import { mayUse } from '../payments/orders.ts';
import type { CallerScope } from '../session.ts';
import { reason, said } from './reasons.ts';
import { publishTimelineEvent, viewerOf } from './timeline.ts';

/**
 * Draws the swallowed click as a lane of its own, seen by the caller and the order's owner. False, and
 * nothing drawn, when there is no such order or the caller may not use it.
 */
export async function recordSwallowedClick(orderNo: string, caller: CallerScope): Promise<boolean> {
  const order = await getDb().order.findUnique({ where: { orderNo }, select: { owner: true, payers: true } });
  if (!order || !mayUse(order, caller)) return false;
  const viewers = [...new Set([caller, ...(order.owner ? [order.owner] : [])])].map(viewerOf);
  await publishTimelineEvent({
    requestId: newRequestId(),
    orderNo,
    channel: 'browser',
    instance: instanceName(),
    step: 'pendingUi',
    decision: 'stopped',
    ...said(reason('clickSwallowed')),
    durationMs: 0,
    at: Date.now(),
    viewers,
  });
  return true;
}
