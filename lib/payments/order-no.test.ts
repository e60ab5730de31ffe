import { describe, expect, it } from 'vitest';
import { madeWithoutSettings, newOrderNo, OrderNoSchema } from './order-no.ts';

describe('order numbers', () => {
  it('say whether the order was made without settings of its own, and nothing else can say so', () => {
    for (let i = 0; i < 2_000; i++) {
      const plain = newOrderNo(false);
      const own = newOrderNo(true);
      expect(OrderNoSchema.safeParse(plain).success).toBe(true);
      expect(OrderNoSchema.safeParse(own).success).toBe(true);
      expect(madeWithoutSettings(plain)).toBe(true);
      // Base32 never writes a u: a number with settings of its own never starts like a plain one.
      expect(madeWithoutSettings(own)).toBe(false);
      expect(own.slice(4)).not.toContain('u');
    }
    // A number written by hand, or made by an earlier version: it may have settings of its own.
    expect(madeWithoutSettings('ord_0123456789abcdef')).toBe(false);
  });
});
