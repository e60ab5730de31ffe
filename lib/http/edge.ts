// The decisions proxy.ts takes before Next.js sees a request, as pure functions (unit-tested in edge.test.ts).
import { randomBytes } from 'node:crypto';

/** The largest body a page or a server action takes (next.config.ts: serverActions.bodySizeLimit). */
export const MAX_FORM_BYTES = 16 * 1024;

/**
 * Whether every segment of a raw path decodes (`%E0%A4%A`, `%zz` and `%C0%AF` do not). Next.js decodes the
 * segments after the proxy has run, and answers one that does not with a bare 500.
 */
export function pathDecodes(rawPath: string): boolean {
  return rawPath.split('/').every((segment) => {
    try {
      decodeURIComponent(segment);
      return true;
    } catch {
      return false;
    }
  });
}

type HeaderSource = { get(name: string): string | null };

const mediaType = (headers: HeaderSource) => (headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();

export function isMultipart(headers: HeaderSource): boolean {
  return mediaType(headers) === 'multipart/form-data';
}

/**
 * Whether a request may run a server action: a POST with Next-Action (the page's fetch), or any multipart
 * POST (a form submitted before the page hydrated, whose fields name the action).
 */
export function mayBeServerAction(method: string, headers: HeaderSource): boolean {
  return method === 'POST' && (headers.get('next-action') !== null || isMultipart(headers));
}

/**
 * Whether a browser's Origin is this site, the one the Host header names. No Origin at all is a handcrafted
 * request (browsers send Origin on every POST), which carries no one else's cookies: let through, as Next.js
 * does. `null` (a sandboxed frame, a data: URL) is another origin.
 */
export function sameOrigin(origin: string | null, host: string | null): boolean {
  if (origin === null) return true;
  if (host === null) return false;
  try {
    const from = new URL(origin);
    if (from.protocol !== 'http:' && from.protocol !== 'https:') return false;
    // Host normalised as the browser normalised Origin: lower case, without the scheme's default port.
    return new URL(`${from.protocol}//${host}`).host === from.host;
  } catch {
    return false;
  }
}

/** A fresh nonce for one response's inline scripts: 128 random bits. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/**
 * The pages' Content-Security-Policy. Scripts: the app's own files, and inline scripts only when they carry
 * this response's nonce (Next.js puts it on the scripts it writes into the page). Styles: the app's
 * stylesheet, plus inline style attributes (React `style={{…}}`), which cannot carry a nonce. Never framed.
 */
export function pageContentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'`,
    `style-src 'self' 'nonce-${nonce}'`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Everything that is not a page (the API's JSON, problems): nothing to run, nothing to load, never framed. */
export const NO_CONTENT_SECURITY_POLICY =
  "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Reads at most `limit` bytes of a body: the bytes, or `over` once it has more (the rest is left unread). */
export async function readAtMost(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<{ over: false; bytes: Uint8Array<ArrayBuffer> } | { over: true }> {
  if (!body) return { over: false, bytes: new Uint8Array() };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return { over: true };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { over: false, bytes };
}

/**
 * Why a server action's body is not one Next.js's client sends, or undefined when it is well-formed: a
 * multipart body must parse, and a fetch action's arguments (field "0" of a form, or the whole text body)
 * must be a JSON list. Next.js would otherwise fail on it inside the action handler (a 500, or an error row).
 */
export async function malformedActionBody(
  contentType: string,
  bytes: Uint8Array<ArrayBuffer>,
  fetchAction: boolean,
): Promise<string | undefined> {
  const multipart = isMultipart({ get: () => contentType });
  let root: string | undefined;
  if (multipart) {
    let form: FormData;
    try {
      form = await new Request('http://form.invalid/', {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: bytes,
      }).formData();
    } catch {
      return 'The body is not a well-formed multipart/form-data form.';
    }
    // A form posted before hydration names its action in a field ($ACTION_ID_…, $ACTION_REF_…): Next.js finds it.
    if (!fetchAction) {
      return [...form.keys()].some((name) => name.startsWith('$ACTION_')) ? undefined : 'The form names no action.';
    }
    const field = form.get('0');
    if (typeof field !== 'string') return 'The form has no arguments for the action (field "0").';
    root = field;
  } else {
    if (!fetchAction) return undefined;
    root = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  }
  let args: unknown;
  try {
    args = JSON.parse(root);
  } catch {
    return 'The action’s arguments are not JSON.';
  }
  // Next.js's client sends the arguments as a list; anything else (`null`, `{"a":1}`, `7`) fails in its handler.
  if (!Array.isArray(args)) return 'The action’s arguments are not a list.';
  return referencesOnlyForms(args) ? undefined : 'The action’s arguments hold a reference this site never sends.';
}

/**
 * React reads a string that starts with "$" in an action's arguments as a reference: to a promise, another
 * field, a server function, a BigInt. One it cannot resolve (`"$"`, `"$@9"`, `"$nx"`) fails inside Next.js's
 * handler (a 500) or waits for ever. This site's forms send only these: an escaped "$" ("$$…"), a form's
 * fields ("$K1"), and the spellings of undefined, -0, NaN, the infinities, a date and a BigInt.
 */
const SENT_BY_THIS_SITE = /^\$(?:\$|D|K[0-9a-f]{1,8}$|undefined$|-0$|NaN$|-?Infinity$|n-?\d{1,40}$)/;

function referencesOnlyForms(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (typeof value === 'string') return !value.startsWith('$') || SENT_BY_THIS_SITE.test(value);
  if (Array.isArray(value)) return value.every((item) => referencesOnlyForms(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    return Object.values(value).every((item) => referencesOnlyForms(item, depth + 1));
  }
  return true;
}
