// Bad input, generated: what a hostile or broken client sends. Every value here is invalid by construction,
// from the contract (README "The HTTP API", lib/lab/settings.ts) and never from the app's own schemas, so a
// validation that is weakened in the app is not weakened here too.
import fc from 'fast-check';

/** Characters that break naive code: NUL, bidi override, lone surrogates, quotes, escapes, percent. */
const nasty = fc.constantFrom(
  '\u0000',
  '\u202e',
  '\ud800',
  '\udfff',
  '😀',
  'é',
  '"',
  '\\',
  '%',
  '\n',
  ' ',
  '\u00a0',
  '<',
  "'",
  '{',
  '\ufeff',
);

/** Any text: any code point, runs of nasty characters, huge runs of one character, and old favourites. */
export const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: nasty, maxLength: 16 }),
  fc.tuple(nasty, fc.integer({ min: 256, max: 6_000 })).map(([char, n]) => char.repeat(n)),
  fc.constantFrom('', 'null', 'undefined', '__proto__', 'constructor', 'ord_', 'ORD_0123456789ABCDEF', '../../etc'),
);

/** Text short enough to keep a whole server-action form under its 16 kB limit (3 UTF-8 bytes a unit at most). */
export const shortText = anyText.map((text) => text.slice(0, 2_000));

/** A well-formed order number that no order has (the suite's orders are random, 16 characters). */
export const unknownOrderNo = fc.constantFrom('ord_0000000000000000', 'ord_zzzzzzzzzzzzzzzz', 'ord_iiiillllloooouu');

/** A name that is not one of `known`. */
export const unknownKey = (...known: string[]) =>
  fc
    .oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'amount', 'orderno', 'Lab'),
    )
    .filter((key) => !known.includes(key));

const fractional = fc
  .double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 })
  .filter((x) => !Number.isInteger(x));

/** Not a whole number of cents from 1 to 100 000 000: negative, zero, fractional, enormous, or not a number. */
export const badAmount: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -1_000_000_000, max: 0 }),
  fc.constantFrom(0, -0, 0.5, 4_199.999, 100_000_001, 2 ** 53 + 2, 1e21, Number.MAX_VALUE, -Number.MAX_VALUE),
  fractional,
  fc.integer({ min: 100_000_001, max: Number.MAX_SAFE_INTEGER }),
  fc.string({ maxLength: 12 }),
  fc.integer({ min: 1, max: 100_000_000 }).map(String),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer({ min: 1, max: 10 }), { maxLength: 3 }),
  fc.constant({}),
);

/** A valid amount, but not the order's (4200): a mismatch, refused before anything moves. */
export const otherAmount = fc.integer({ min: 1, max: 100_000_000 }).filter((n) => n !== 4_200);

/** JSON that is not an object. */
export const nonObject: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 20 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
);

/** Text that parses to a JSON object once the server has dropped a byte-order mark: not "malformed". */
function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text.replace(/^\ufeff/, ''));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Not JSON, or JSON with a syntax error. Never blank: an empty body means "no body" to POST /api/orders. */
export const malformedJson = fc
  .oneof(
    fc.json({ maxDepth: 2 }).map((json) => json.slice(0, Math.max(1, json.length - 1))),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
    fc.constantFrom(
      '{',
      '{"amountCents":',
      "{'amountCents':4200}",
      '{"amountCents":4200,}',
      '{"amountCents":NaN}',
      '{"amountCents":0x10}',
      '{"amountCents":Infinity}',
      '[1,',
      '{"a":1}}',
      '\u0000',
      '{"orderNo":"ord_0000000000000000" "amountCents":4200}',
    ),
  )
  .filter((text) => text.trim() !== '' && !isJsonObject(text));

/** Raw JSON that no serializer would write, and that is still invalid. */
export const oddJson = fc.constantFrom(
  '{"amountCents":1e400}',
  '{"amountCents":-1e400}',
  '{"amountCents":4200,"amountCents":0}',
  '{"amountCents":1e-400}',
  '{"amountCents":"4200"}',
  '{"__proto__":{"amountCents":4200}}',
);

const notABoolean = fc.oneof(fc.constantFrom(0, 1, 'true', 'false', null, [], {}), fc.string({ maxLength: 5 }));
const LAYERS = ['pendingUi', 'token', 'requestKey', 'stateMachine', 'uniqueConstraint', 'bankKey'] as const;
const FAULTS = [
  'bankLatencyMs',
  'bankFailure',
  'bankTimeoutAfterCharge',
  'crashAfterCharge',
  'receiptCrashBeforeAck',
  'stallBeforeBankMs',
  'bankLateChargeMs',
  'crashBeforeCharge',
  'notifyFailsAfterCharge',
  'dropResponse',
];

/** Lab settings that break the contract: wrong shapes, wrong types, unknown switches, out-of-range faults. */
export const badLab: fc.Arbitrary<unknown> = fc.oneof(
  nonObject,
  nonObject.map((layers) => ({ layers })),
  nonObject.map((faults) => ({ faults })),
  fc.tuple(fc.constantFrom(...LAYERS), notABoolean).map(([layer, value]) => ({ layers: { [layer]: value } })),
  unknownKey(...LAYERS).map((layer) => ({ layers: { [layer]: false } })),
  unknownKey(...FAULTS).map((fault) => ({ faults: { [fault]: 0 } })),
  fc
    .oneof(fc.integer({ max: -1 }), fc.integer({ min: 60_001 }), fractional, fc.constantFrom('0', null, true))
    .map((bankLatencyMs) => ({ faults: { bankLatencyMs } })),
  fc
    .oneof(anyText, fc.constantFrom('None', 'ERROR', 'timeout'))
    .filter((mode) => !['none', 'decline', 'error'].includes(mode))
    .map((bankFailure) => ({ faults: { bankFailure } })),
  notABoolean.map((crashAfterCharge) => ({ faults: { crashAfterCharge } })),
  notABoolean.map((notifyFailsAfterCharge) => ({ faults: { notifyFailsAfterCharge } })),
  fc
    .oneof(fc.integer({ max: -1 }), fc.integer({ min: 10_001 }), fractional, fc.constantFrom('0', null))
    .map((bankLateChargeMs) => ({ faults: { bankLateChargeMs } })),
  fc
    .oneof(fc.integer({ max: 99 }), fc.integer({ min: 600_001 }), fractional, fc.constantFrom('1000', null, {}))
    .map((leaseMs) => ({ claims: { leaseMs } })),
  unknownKey('leaseMs', 'release').map((name) => ({ claims: { [name]: 1_000 } })),
  fc
    .oneof(anyText, fc.constantFrom('NoMoneyMoved', 'always', null, true, 0))
    .filter((rule) => !['noMoneyMoved', 'anyError', 'never'].includes(rule as string))
    .map((release) => ({ claims: { release } })),
  fc
    .oneof(anyText, fc.constantFrom('Business', 'hash', null, 1))
    .filter((strategy) => !['business', 'paramHash', 'perSubmit'].includes(strategy as string))
    .map((strategy) => ({ keys: { strategy } })),
  unknownKey('strategy').map((name) => ({ keys: { [name]: 'business' } })),
  fc
    .oneof(anyText, fc.constantFrom('FirstResult', 'errors', null, false))
    .filter((answer) => !['firstResult', 'error'].includes(answer as string))
    .map((duplicate) => ({ answers: { duplicate } })),
  unknownKey('duplicate').map((name) => ({ answers: { [name]: 'error' } })),
  fc
    .oneof(fc.integer({ max: 99 }), fc.integer({ min: 30_001 }), fractional)
    .map((timeoutMs) => ({ gateway: { timeoutMs } })),
  fc.oneof(fc.integer({ max: -1 }), fc.integer({ min: 4 })).map((retries) => ({ gateway: { retries } })),
  unknownKey('layers', 'faults', 'claims', 'keys', 'answers', 'gateway').map((key) => ({ [key]: {} })),
);

/** A body one byte too many, and far more: valid JSON whose only fault is its size (the limit is 16 KiB). */
export const oversized = (json: string) =>
  fc.integer({ min: 16 * 1024, max: 64 * 1024 }).map((padding) => `${json.slice(0, -1)}${' '.repeat(padding)}}`);

// Header values travel as bytes (latin-1); fetch trims their ends, so the faults are put in the middle.
const latin1 = fc.constantFrom(
  ...Array.from({ length: 0x7e - 0x20 + 1 }, (_, i) => String.fromCharCode(0x20 + i)),
  ...Array.from({ length: 0xff - 0xa0 + 1 }, (_, i) => String.fromCharCode(0xa0 + i)),
  '\t',
);
const headerText = fc.string({ unit: latin1, maxLength: 40 });
const withFault = (fault: fc.Arbitrary<string>) =>
  fc.tuple(headerText, fault, headerText).map(([before, bad, after]) => `a${before}${bad}${after}a`);

/** Idempotency-Key: one key of 1-255 visible ASCII characters; these are empty, spaced, non-ASCII, lists or too long. */
export const badIdempotencyKey = fc.oneof(
  fc.constant(''),
  withFault(fc.constantFrom(' ', '\t', 'é', 'ÿ', '\u00a0', ',', ';')),
  fc.integer({ min: 256, max: 8_000 }).map((n) => 'k'.repeat(n)),
);

/** X-Client-Id: 1-64 of letters, digits, ".", "_", "-"; these are empty, carry another character, or are too long. */
export const badClientId = fc.oneof(
  fc.constant(''),
  withFault(fc.constantFrom(' ', '/', '@', ':', '*', 'é', '\t', '%', '"')),
  fc.integer({ min: 65, max: 4_000 }).map((n) => 'c'.repeat(n)),
);

/** Checkout-Token: base64url, at most 128 characters; these are not, and one is well-formed but guessed. */
export const badCheckoutToken = fc.oneof(
  fc.constant(''),
  withFault(fc.constantFrom(' ', '.', '+', '/', '=', 'é', '%')),
  fc.integer({ min: 129, max: 4_000 }).map((n) => 't'.repeat(n)),
);
export const guessedCheckoutToken = fc.string({
  unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'),
  minLength: 43,
  maxLength: 43,
});

/** A stream id is "<milliseconds>-<sequence>"; these are not. */
export const badStreamId = fc.oneof(
  anyText.filter((text) => !/^\d+-\d+$/.test(text)),
  fc.constantFrom('1-', '-1', '1', '1--1', '1-2-3', ' 1-1', '1-1 ', '１-１', '٣-٣', '0x1-1', '1e3-1', '+1-1', '1.5-1'),
);

/** Whether a path segment fails to decode (the platform's own rule: a broken escape, or bytes that are not UTF-8). */
const undecodable = (text: string) => {
  try {
    decodeURIComponent(text);
    return false;
  } catch {
    return true;
  }
};
const percentByte = (min: number, max: number) =>
  fc.integer({ min, max }).map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`);
/** Letters that are not hex digits: text around a fault that cannot complete an escape. */
const plain = fc.string({ unit: fc.constantFrom(...'ghijklmnopqrstuvwxyz_-.'), maxLength: 8 });

/**
 * A path segment that is not valid percent-encoding: a '%' without two hex digits after it, a continuation
 * byte alone, a lead byte cut short, an overlong form, a surrogate, a byte UTF-8 never uses.
 */
export const undecodableSegment = fc
  .tuple(
    plain,
    fc.oneof(
      fc.constantFrom('%', '%%', '%z', '%zz', '%G0', '%E0%A4%A', '%C0%AF', '%C1%BF', '%ED%A0%80', '%F4%90%80%80'),
      percentByte(0x80, 0xbf),
      percentByte(0xf5, 0xff),
      fc.tuple(percentByte(0xc2, 0xf4), fc.constantFrom('', '%41', '%C2')).map(([lead, next]) => `${lead}${next}`),
      fc.constantFrom(...'0123456789ABCDEFabcdef').map((digit) => `%${digit}`),
    ),
    plain,
  )
  .map(([before, fault, after]) => `${before}${fault}${after}`)
  .filter(undecodable);

const COOKIE_OCTET = [..."!#$%&'()*+-./0123456789:<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~"];
const BASE64URL = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'];

/**
 * A session cookie the server did not sign: an id of the client's choosing (the old, unsigned format), an id
 * with a guessed signature, the right shape with a wrong separator, or any cookie text at all.
 */
export const forgedSessionCookie = fc.oneof(
  fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 22, maxLength: 22 }),
  fc
    .tuple(
      fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 22, maxLength: 22 }),
      fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 43, maxLength: 43 }),
      fc.constantFrom('.', '.', '.', ':', '|', ''),
    )
    .map(([id, signature, separator]) => `${id}${separator}${signature}`),
  fc.string({ unit: fc.constantFrom(...COOKIE_OCTET), maxLength: 120 }),
);

/** The methods an API route may export; a route answers those it does not take with 405. */
export const routeMethod = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE');
