// Order numbers: the business identity of a payment (the article's first detail: the key of the intent).
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

export function newOrderNo(): string {
  const bytes = randomBytes(16);
  let suffix = '';
  for (const byte of bytes) suffix += ALPHABET[byte % 32];
  return `ord_${suffix}`;
}

export const OrderNoSchema = z
  .string()
  .regex(/^ord_[0-9a-z]{16}$/, { message: 'must be an order number such as ord_0123456789abcdef' });

/** Amounts are integers of cents, from 1 cent to one million. */
export const AmountCentsSchema = z
  .number({ message: 'must be a number of cents' })
  .int({ message: 'must be a whole number of cents' })
  .positive({ message: 'must be greater than 0' })
  .max(100_000_000, { message: 'must be at most 100000000 (one million)' });
