// The Idempotency-Key header, as draft-ietf-httpapi-idempotency-key-header defines it: an RFC 9651
// Structured Field String (`Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`), parsed with a
// maintained parser. The bare spelling that Stripe's clients send (`Idempotency-Key: 8e03…`, no quotes) is
// accepted too, and names the same key: both spellings of one key are one key. Either way the header names one
// key: a List of them (a comma: what a proxy makes of two Idempotency-Key headers) or parameters are refused.
// Pure: unit-tested.
import { ParseError, parseItem, parseList } from 'structured-headers';
import { problem, type Say, say } from './problem.ts';

export const MAX_KEY_LENGTH = 255;

/**
 * The grammar, in the words a 400 quotes back (and the API reference shows): each one ends the sentence "The
 * Idempotency-Key header …".
 */
export const KEY_RULES = {
  required: 'is required',
  empty: 'must not be empty',
  long: `must be at most ${MAX_KEY_LENGTH} characters`,
  quoted:
    'must be a Structured Field String when quoted (RFC 9651): printable ASCII in double quotes, with \\" and \\\\ escaped',
  parameters: 'must not carry parameters (";name=value")',
  list: 'must name one key, not a list: a comma separates two keys (a proxy joins two Idempotency-Key headers with one)',
  bare: 'must be visible ASCII characters when unquoted, without spaces or quotes',
} as const;

export type KeyRule = keyof typeof KEY_RULES;
export type ParsedKey = { ok: true; key: string } | { ok: false; rule: KeyRule; message: string };

export function parseIdempotencyKey(header: string | null): ParsedKey {
  if (header === null) return refuse('required');
  const value = header.trim();
  if (value === '' || value === '""') return refuse('empty');
  if (value.startsWith('"')) return parseQuoted(value);
  if (value.length > MAX_KEY_LENGTH) return refuse('long');
  if (!/^[\x21-\x7E]+$/.test(value)) return refuse('bare');
  if (value.includes(',')) return refuse('list');
  return value.includes(';') ? refuse('parameters') : { ok: true, key: value };
}

function parseQuoted(value: string): ParsedKey {
  try {
    const [item, parameters] = parseItem(value);
    if (typeof item !== 'string') return refuse('quoted');
    if (parameters.size > 0) return refuse('parameters');
    if (item.length === 0) return refuse('empty');
    if (item.length > MAX_KEY_LENGTH) return refuse('long');
    return { ok: true, key: item };
  } catch (error) {
    if (error instanceof ParseError) return refuse(isList(value) ? 'list' : 'quoted');
    throw error;
  }
}

/** Whether the header is a List of more than one member (`"a", "b"`): two keys, not one malformed key. */
function isList(value: string): boolean {
  try {
    return parseList(value).length > 1;
  } catch {
    return false;
  }
}

const refuse = (rule: KeyRule): ParsedKey => ({ ok: false, rule, message: KEY_RULES[rule] });

/** 400 for a key that breaks the grammar, naming the rule (`rule`: a stable name for programs). */
export function keyProblem(parsed: Extract<ParsedKey, { ok: false }>): Response {
  // The rule in the caller's language (messages/<locale>/problems.json keyRules: KEY_RULES's words in English).
  const rule = say(`keyRules.${parsed.rule}`, parsed.rule === 'long' ? { max: String(MAX_KEY_LENGTH) } : {});
  return problem(
    400,
    'idempotency-key',
    parsed.rule === 'required' ? 'Idempotency-Key missing' : 'Idempotency-Key malformed',
    {
      detail: say('details.idempotencyKey', { rule }),
      errors: [{ field: 'Idempotency-Key', message: rule }],
      rule: parsed.rule,
    },
  );
}

/** 422 for a key that names another intent: another body, or another endpoint (`usedOn`). */
export function keyReusedProblem(
  usedOn: string | undefined,
  noun: 'payment' | 'order' | 'refund',
  headers: HeadersInit = {},
): Response {
  const why: Say = usedOn ? say('fields.firstUsedOn', { endpoint: usedOn }) : say('fields.differentBody');
  return problem(
    422,
    'idempotency-key-reused',
    usedOn ? 'Idempotency-Key used on another endpoint' : 'Idempotency-Key reused with a different body',
    {
      detail: say('details.idempotencyKeyReused', { why, noun: say(`nouns.${noun}`) }),
      errors: [{ field: 'Idempotency-Key', message: why }],
    },
    headers,
  );
}
