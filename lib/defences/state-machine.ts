// A transition table, pure: the moves a business object's status may make, and what every conditional update is
// conditional on. Layer 3 is one of these for each object with clear states: an order's payment
// (order-claim/transitions.ts) and a refund (refund-claim/transitions.ts).

export type StateMachine<Status extends string, Event extends string> = {
  /** The status after `event`, or undefined when the event is not allowed from `status`. */
  nextStatus(status: Status, event: Event): Status | undefined;
  /** The statuses from which `event` may be applied: the `WHERE status IN (...)` of its update. */
  statusesAllowing(event: Event): Status[];
  /** The status `event` leads to (the same from every status that allows it). */
  targetOf(event: Event): Status;
  /** Whether no event moves it any more, but the ones listed (the bank's books, which may still correct it). */
  isFinal(status: Status, exceptBy?: Event[]): boolean;
};

export function stateMachine<Status extends string, Event extends string>(
  statuses: readonly Status[],
  table: Record<Status, Partial<Record<Event, Status>>>,
): StateMachine<Status, Event> {
  const statusesAllowing = (event: Event) => statuses.filter((status) => table[status][event] !== undefined);
  return {
    nextStatus: (status, event) => table[status][event],
    statusesAllowing,
    targetOf(event) {
      const [from] = statusesAllowing(event);
      const to = from && table[from][event];
      if (!to) throw new Error(`no transition for ${event}`);
      return to;
    },
    isFinal: (status, exceptBy = []) => Object.keys(table[status]).every((event) => exceptBy.includes(event as Event)),
  };
}
