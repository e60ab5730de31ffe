// Order numbers: the business identity of a payment (the article's first detail: the key of the intent).
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case: never i, l, o or u

/**
 * What starts the number of an order made without settings of its own: a letter base32 never writes, so no
 * other number carries it (an order with settings of its own, one of an earlier version, one written by hand).
 */
const NO_SETTINGS_OF_ITS_OWN = 'ord_u';
/** `ord_` and 16 letters. */
const LENGTH = 20;

/**
 * A new order's number. One made without settings of its own says so (`ord_u…`): its payments know, before
 * reading anything, that it runs under its owner's policy (lib/lab/policy.ts's `forCaller`: decision 036).
 */
export function newOrderNo(settingsOfItsOwn: boolean): string {
  let number = settingsOfItsOwn ? 'ord_' : NO_SETTINGS_OF_ITS_OWN;
  for (const byte of randomBytes(LENGTH - number.length)) number += ALPHABET[byte % 32];
  return number;
}

/** Whether the order was made without settings of its own (false: it may have some; read them). */
export function madeWithoutSettings(orderNo: string): boolean {
  return orderNo.startsWith(NO_SETTINGS_OF_ITS_OWN);
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
