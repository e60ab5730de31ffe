import { describe, expect, it } from 'vitest';
import { type Caller, drained } from './drive.ts';

const caller = (orderNo: string, more: Partial<Caller> = {}): Caller => ({
  orderNo,
  clientId: 'chaos-shop-a',
  key: `chaos-shop-a-${orderNo}`,
  startedAt: 0,
  attempts: [],
  ...more,
});

describe('drained: the storm stops by itself', () => {
  it('is the callers’ end when they end in time', async () => {
    await expect(
      drained(
        Promise.resolve([]),
        () => [],
        () => 0,
        1_000,
      ),
    ).resolves.toBeUndefined();
  });

  it('fails naming the callers still going, and what each is doing, once its bound has passed', async () => {
    const callers = [
      caller('ord_done', { final: { status: 201, at: 5 } }),
      caller('ord_gave_up', { gaveUp: true }),
      caller('ord_stuck', { attempts: [{ at: 10, ms: 3 }], doing: { what: 'reading the answer', since: 1_500 } }),
    ];
    const never = new Promise<never>(() => {});
    const error = await drained(
      never,
      () => callers,
      () => 2_000,
      50,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const { message } = error as Error;
    expect(message).toContain('1 still going');
    expect(message).toContain('chaos-shop-a for ord_stuck (1 request(s), reading the answer since 1.5 s)');
    expect(message).not.toContain('ord_done');
    expect(message).not.toContain('ord_gave_up');
  });

  it('reads the callers when its bound passes, not when the storm began (they start over the launch window)', async () => {
    const callers: Caller[] = [];
    const checked = drained(
      new Promise<never>(() => {}),
      () => callers,
      () => 0,
      50,
    ).catch((e: unknown) => e);
    callers.push(caller('ord_late'));
    expect(((await checked) as Error).message).toContain('ord_late');
  });
});
