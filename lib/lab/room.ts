import 'server-only';
// The presenter's view of a workshop room, read from the shared timeline: who is active, and which orders
// were charged more than once, under which switches (each lane says which defences it ran with).
import { readTimeline, type StoredTimelineEvent } from './timeline.ts';

export type RoomSummary = {
  /** Attendees (browser sessions) with a payment request on the recent timeline. */
  attendees: number;
  /** Payment requests on the recent timeline. */
  requests: number;
  /** Orders the card network charged more than once, newest first, with the switches their requests ran under. */
  doubleCharges: Array<{ orderNo: string; charges: number; defences: string[]; at: number }>;
};

export function summarizeRoom(events: StoredTimelineEvent[]): RoomSummary {
  const attendees = new Set<string>();
  const requests = new Set<string>();
  const charged = new Map<string, { charges: number; defences: Set<string>; at: number }>();
  const defencesOf = new Map<string, string>();
  for (const event of events) {
    if (event.step === 'request' && event.decision === 'received') {
      requests.add(event.requestId);
      if (event.channel === 'browser' && event.viewers?.[0]) attendees.add(event.viewers[0]);
      const defences = /defences on: (.+)$/.exec(event.detail ?? '')?.[1];
      if (defences) defencesOf.set(event.requestId, defences);
    }
    if (event.step === 'bank' && event.decision === 'charged') {
      const order = charged.get(event.orderNo) ?? { charges: 0, defences: new Set<string>(), at: event.at };
      order.charges += 1;
      order.at = Math.max(order.at, event.at);
      const defences = defencesOf.get(event.requestId);
      if (defences) order.defences.add(defences);
      charged.set(event.orderNo, order);
    }
  }
  const doubleCharges = [...charged.entries()]
    .filter(([, order]) => order.charges > 1)
    .map(([orderNo, order]) => ({ orderNo, charges: order.charges, defences: [...order.defences], at: order.at }))
    .sort((a, b) => b.at - a.at);
  return { attendees: attendees.size, requests: requests.size, doubleCharges };
}

export async function readRoom(): Promise<RoomSummary> {
  return summarizeRoom(await readTimeline(undefined, 1_000));
}
