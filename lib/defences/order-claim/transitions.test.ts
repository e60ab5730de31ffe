import { describe, expect, it } from 'vitest';
import { isFinal, nextStatus, PAYMENT_STATUSES, type PaymentEvent, statusesAllowing, targetOf } from './transitions.ts';

const EVENTS: PaymentEvent[] = [
  'claim',
  'charged',
  'declined',
  'failedBeforeCharge',
  'timedOut',
  'takenOver',
  'resumed',
  'reconciledCharged',
  'reconciledNoCharge',
];

describe('payment transitions', () => {
  it('lets only a pending order be claimed', () => {
    expect(statusesAllowing('claim')).toEqual(['PENDING']);
    for (const status of PAYMENT_STATUSES.filter((s) => s !== 'PENDING')) {
      expect(nextStatus(status, 'claim')).toBeUndefined();
    }
  });

  it('never leaves a final status, but for a charge the bank’s books show on a declined order', () => {
    expect(PAYMENT_STATUSES.filter(isFinal)).toEqual(['PAID', 'DECLINED']);
    for (const event of EVENTS) {
      expect(nextStatus('PAID', event)).toBeUndefined();
      if (event !== 'reconciledCharged') expect(nextStatus('DECLINED', event)).toBeUndefined();
    }
    expect(nextStatus('DECLINED', 'reconciledCharged')).toBe('PAID');
  });

  it('goes back to PENDING only when no money moved', () => {
    const backToPending = EVENTS.filter((event) =>
      PAYMENT_STATUSES.some((status) => status !== 'PENDING' && nextStatus(status, event) === 'PENDING'),
    );
    expect(backToPending.sort()).toEqual(['failedBeforeCharge', 'reconciledNoCharge']);
  });

  it('settles an unknown outcome only by what the bank says', () => {
    expect(nextStatus('PROCESSING', 'timedOut')).toBe('UNKNOWN');
    expect(nextStatus('UNKNOWN', 'reconciledCharged')).toBe('PAID');
    expect(nextStatus('UNKNOWN', 'reconciledNoCharge')).toBe('PENDING');
    expect(nextStatus('UNKNOWN', 'declined')).toBeUndefined();
    expect(nextStatus('UNKNOWN', 'failedBeforeCharge')).toBeUndefined();
    expect(nextStatus('UNKNOWN', 'charged')).toBeUndefined();
    // A charge made while layer 3 was off is still found and recorded.
    expect(nextStatus('PENDING', 'reconciledCharged')).toBe('PAID');
  });

  it('releases a claim only after taking it over: a live PROCESSING claim is never released by another', () => {
    expect(statusesAllowing('reconciledNoCharge')).toEqual(['UNKNOWN']);
    expect(statusesAllowing('takenOver')).toEqual(['PROCESSING', 'UNKNOWN']);
    expect(statusesAllowing('resumed')).toEqual(['UNKNOWN']);
  });

  it('gives each event one target', () => {
    for (const event of EVENTS) {
      const targets = new Set(statusesAllowing(event).map((status) => nextStatus(status, event)));
      expect(targets.size).toBe(1);
      expect(targets.has(targetOf(event))).toBe(true);
    }
  });
});
