import { describe, expect, it } from 'vitest';
import { defencesOf, offsetsByOrder, planLane, readDelivery } from './lane-view.ts';
import type { TimelineEvent } from './timeline-event.ts';

/** A lane as pay.ts marks it: [step, decision] in marking order. */
function lane(
  marks: Array<[TimelineEvent['step'], TimelineEvent['decision']]>,
  channel: TimelineEvent['channel'] = 'browser',
) {
  return marks.map(
    ([step, decision], index): TimelineEvent => ({
      requestId: 'r1',
      orderNo: 'ord_0000000000000000',
      channel,
      instance: 'app',
      step,
      decision,
      durationMs: 1,
      at: 1_000 + index,
    }),
  );
}
const steps = (events: TimelineEvent[]) => events.map((event) => `${event.step} ${event.decision}`);

describe('a lane as the lab draws it', () => {
  it('ends at layer 3 when the state machine stopped it; the key it let go of is a consequence', () => {
    // Layers 2 and 3 on: layer 4's "off" is marked before the statement's verdict, the release after it.
    const plan = planLane(
      lane([
        ['request', 'received'],
        ['requestKey', 'claimed'],
        ['uniqueConstraint', 'off'],
        ['stateMachine', 'stopped'],
        ['requestKey', 'released'],
        ['outcome', 'in_progress'],
      ]),
    );
    expect(steps(plan.path)).toEqual(['requestKey claimed', 'stateMachine stopped']);
    expect(plan.endsAt).toBe('stateMachine');
    expect(plan.endKind).toBe('stopped');
    expect(steps(plan.consequences)).toEqual(['requestKey released']);
    expect(steps(plan.notReached)).toEqual(['uniqueConstraint off']);
    expect(plan.outcome?.decision).toBe('in_progress');
  });

  it('puts the steps of a lane that reached the bank in layer order, and what followed the bank after it', () => {
    const plan = planLane(
      lane([
        ['request', 'received'],
        ['token', 'passed'],
        ['requestKey', 'claimed'],
        ['uniqueConstraint', 'off'],
        ['stateMachine', 'claimed'],
        ['bankKey', 'off'],
        ['bank', 'charged'],
        ['requestKey', 'completed'],
        ['outcome', 'completed'],
      ]),
    );
    expect(steps(plan.path)).toEqual([
      'token passed',
      'requestKey claimed',
      'stateMachine claimed',
      'uniqueConstraint off',
      'bankKey off',
      'bank charged',
    ]);
    expect(plan.endsAt).toBe('bank');
    expect(steps(plan.consequences)).toEqual(['requestKey completed']);
  });

  it('ends a stalled attempt where it lost its claim, after the pause, in time order', () => {
    const plan = planLane(
      lane([
        ['request', 'received'],
        ['requestKey', 'off'],
        ['uniqueConstraint', 'off'],
        ['stateMachine', 'claimed'],
        ['request', 'stalled'],
        ['stateMachine', 'lost'],
        ['outcome', 'in_progress'],
      ]),
    );
    expect(steps(plan.path)).toEqual([
      'requestKey off',
      'stateMachine claimed',
      'uniqueConstraint off',
      'request stalled',
      'stateMachine lost',
    ]);
    expect(plan.endsAt).toBe('stateMachine');
  });

  it('ends at the bank’s last word, and at layer 5 when the bank replayed its first charge', () => {
    const unknown = planLane(
      lane([
        ['bankKey', 'off'],
        ['bank', 'unknown'],
        ['bank', 'confirmed'],
        ['outcome', 'completed'],
      ]),
    );
    expect(unknown.end?.decision).toBe('confirmed');
    const replayed = planLane(
      lane([
        ['bankKey', 'sent'],
        ['bankKey', 'stopped'],
        ['requestKey', 'completed'],
        ['outcome', 'duplicate'],
      ]),
    );
    expect(replayed.endsAt).toBe('bankKey');
    expect(steps(replayed.consequences)).toEqual(['requestKey completed']);
  });

  it('a running request has no end; an answer before any layer ends at the outcome; a swallowed click at layer 0', () => {
    expect(
      planLane(
        lane([
          ['request', 'received'],
          ['token', 'passed'],
          ['bankKey', 'sent'],
        ]),
      ).endsAt,
    ).toBeUndefined();
    expect(planLane(lane([['outcome', 'order_not_found']])).endsAt).toBe('outcome');
    expect(planLane(lane([['pendingUi', 'stopped']])).endsAt).toBe('pendingUi');
  });

  it('keeps the time order of a worker’s lane, which ends at its last step', () => {
    const plan = planLane(
      lane(
        [
          ['receipt', 'sent'],
          ['receipt', 'duplicate'],
        ],
        'worker',
      ),
    );
    expect(steps(plan.path)).toEqual(['receipt sent', 'receipt duplicate']);
    expect(plan.endsAt).toBe('receipt');
  });

  it('reads a receipt delivery as the worker words it: its charge, and whether it was delivered again', () => {
    const delivery = (detail: string) =>
      readDelivery({ ...lane([['receipt', 'duplicate']], 'worker')[0], detail } as TimelineEvent);
    expect(delivery('delivered message 1712-0 (charge ch_ab12): sent')).toEqual({
      redelivered: false,
      chargeId: 'ch_ab12',
      result: 'sent',
    });
    expect(delivery('redelivered message 1712-0 (charge ch_ab12): receipt already sent (RECEIPT unique key)')).toEqual({
      redelivered: true,
      chargeId: 'ch_ab12',
      result: 'receipt already sent (RECEIPT unique key)',
    });
    expect(delivery('delivered message 1712-0: sent').chargeId).toBeUndefined();
  });

  it('reads a delivery and the defences from their reasons, as the lab does in any language', () => {
    const [event] = lane([['receipt', 'duplicate']], 'worker');
    const said = (values: Record<string, string>) =>
      readDelivery({ ...event, reason: { key: 'receiptDelivery', values } } as TimelineEvent);
    expect(said({ delivery: 'again', message: '1712-0', charge: 'ch_ab12', result: 'duplicate' })).toEqual({
      redelivered: true,
      chargeId: 'ch_ab12',
      result: 'duplicate',
    });
    expect(said({ delivery: 'first', message: '1712-0', charge: 'none', result: 'sent' }).chargeId).toBeUndefined();
    const [received] = lane([['request', 'received']]);
    expect(
      defencesOf({ ...received, reason: { key: 'received', values: { defences: 'none' } } } as TimelineEvent),
    ).toBe('none');
    expect(defencesOf({ ...received, detail: 'api request for 4200 cents; defences on: 0 1 2' } as TimelineEvent)).toBe(
      '0 1 2',
    );
  });

  it('measures each lane from the first lane of the same order', () => {
    const offsets = offsetsByOrder([
      { requestId: 'b', orderNo: 'ord_1', at: 1_250 },
      { requestId: 'a', orderNo: 'ord_1', at: 1_000 },
      { requestId: 'c', orderNo: 'ord_2', at: 5_000 },
    ]);
    expect(Object.fromEntries(offsets)).toEqual({ a: 0, b: 250, c: 0 });
  });
});
