import 'server-only';
// The presenter's view of a workshop room: who is active (from the room's timeline), and which orders were
// charged more than once (from the bank's statement: the timeline keeps only its newest 1,000 entries, which
// anyone can fill), under which switches (each lane says which defences it ran with, while it is still there).
import { getBankDb } from '../db.ts';
import { roomSince } from './room-steering.ts';
import { readTimeline, type StoredTimelineEvent } from './timeline.ts';

export type RoomSummary = {
  /** Attendees (browser sessions) with a payment request on the recent timeline. */
  attendees: number;
  /** Payment requests on the recent timeline. */
  requests: number;
  /** Orders the card network charged more than once, newest first, with the switches their requests ran under. */
  doubleCharges: Array<{ orderNo: string; charges: number; defences: string[]; at: number }>;
};

type Charged = Map<string, { charges: number; defences: Set<string>; at: number }>;

/** The attendees and requests on the timeline, and each charged order's charges there and their defences. */
function readLanes(events: StoredTimelineEvent[]): { attendees: Set<string>; requests: Set<string>; charged: Charged } {
  const attendees = new Set<string>();
  const requests = new Set<string>();
  const charged: Charged = new Map();
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
  return { attendees, requests, charged };
}

/** How far back, and how many, the room lists the orders the bank charged more than once. */
const DOUBLE_CHARGES_SINCE_HOURS = 24;
const MOST_DOUBLE_CHARGES = 100;

/**
 * The orders the bank charged more than once in the last day, or since the room's reset, newest first (the
 * statement's index on its time).
 */
async function doubleChargedOrders(): Promise<Array<{ orderNo: string; charges: number; at: number }>> {
  const since = new Date(await roomSince());
  const rows = await getBankDb().$queryRaw<Array<{ order_no: string; charges: number; at: Date }>>`
    SELECT merchant_ref AS order_no, count(*)::int AS charges, max(created_at) AS at
    FROM bank_charges
    WHERE created_at > now() - make_interval(hours => ${DOUBLE_CHARGES_SINCE_HOURS}) AND created_at > ${since}
    GROUP BY merchant_ref
    HAVING count(*) > 1
    ORDER BY max(created_at) DESC
    LIMIT ${MOST_DOUBLE_CHARGES}`;
  return rows.map((row) => ({ orderNo: row.order_no, charges: row.charges, at: row.at.getTime() }));
}

export async function readRoom(): Promise<RoomSummary> {
  const [events, charged] = await Promise.all([readTimeline(undefined, 1_000), doubleChargedOrders()]);
  const { attendees, requests, charged: onTimeline } = readLanes(events);
  return {
    attendees: attendees.size,
    requests: requests.size,
    // The defences of the lanes still on the timeline (none once they have gone: "unknown").
    doubleCharges: charged.map((order) => ({
      ...order,
      defences: [...(onTimeline.get(order.orderNo)?.defences ?? [])],
    })),
  };
}
