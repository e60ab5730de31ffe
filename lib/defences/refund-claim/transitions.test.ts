import { describe, expect, it } from 'vitest';
import { REFUND, REFUND_STATUSES } from './transitions.ts';

describe('refund transitions', () => {
  it('lets only a requested refund be claimed, and never leaves a final status', () => {
    expect(REFUND.statusesAllowing('claim')).toEqual(['REQUESTED']);
    expect(REFUND_STATUSES.filter((status) => REFUND.isFinal(status))).toEqual(['SUCCEEDED', 'FAILED']);
  });

  it('gives a claim back only where no money moved, and settles a doubt only by the bank’s answer', () => {
    expect(REFUND.nextStatus('PROCESSING', 'failedBeforeRefund')).toBe('REQUESTED');
    expect(REFUND.nextStatus('UNKNOWN', 'failedBeforeRefund')).toBeUndefined();
    expect(REFUND.statusesAllowing('reconciledNoRefund')).toEqual(['UNKNOWN']);
    expect(REFUND.statusesAllowing('resumed')).toEqual(['UNKNOWN']);
    expect(REFUND.statusesAllowing('takenOver')).toEqual(['PROCESSING', 'UNKNOWN']);
    expect(REFUND.targetOf('refunded')).toBe('SUCCEEDED');
  });
});
