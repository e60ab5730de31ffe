// Reading a JSON body safely: a size limit (413), malformed JSON (400), then the caller's zod schema.
// The route reads the request's own stream (proxy.ts does not run for the API, so nothing buffered it
// before): a 10 MB body costs 16 KiB of memory and is refused as soon as they have arrived.
import type { z } from 'zod';
import { problem, type Say, say, validationProblem } from './problem.ts';

export const MAX_BODY_BYTES = 16 * 1024;

export type Parsed<T> = { ok: true; value: T } | { ok: false; response: Response };

export async function readJsonBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  options: { allowEmpty?: boolean } = {},
): Promise<Parsed<z.infer<S>>> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) return { ok: false, response: tooLarge() };
  // JSON only: a form or text/plain body is what another site's page can send without a preflight.
  const type = request.headers.get('content-type');
  if (type !== null ? !isJson(type) : declared > 0) return { ok: false, response: notJson(type) };

  const text = await bodyText(request, declared);
  if (text === undefined) return { ok: false, response: tooLarge() };

  let data: unknown;
  if (text.trim() === '') {
    if (!options.allowEmpty) return { ok: false, response: malformed(say('details.emptyBody')) };
    data = {};
  } else {
    try {
      data = JSON.parse(text);
    } catch {
      return { ok: false, response: malformed(say('details.notValidJson')) };
    }
  }
  const result = schema.safeParse(data);
  return result.success ? { ok: true, value: result.data } : { ok: false, response: validationProblem(result.error) };
}

/**
 * The body as text, or undefined when it is over the limit. With a Content-Length (at most the limit, checked
 * above), Node.js's parser delivers exactly that many bytes and no more (the rest would be the connection's next
 * request), so the body is read whole, in one call; without one (chunked), the bytes are counted as they arrive: a
 * missing Content-Length must not get past the limit. One read instead of a loop of them is about 20 µs of CPU a
 * payment (bench/results.md, decision 038).
 */
async function bodyText(request: Request, declared: number): Promise<string | undefined> {
  if (!request.body) return '';
  if (request.headers.has('content-length') && declared <= MAX_BODY_BYTES) return request.text();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return UTF8.decode(Buffer.concat(chunks));
}

/** One decoder for every body (making one costs more than decoding a payment's body); it keeps no state between calls. */
const UTF8 = new TextDecoder();

function isJson(type: string | null): boolean {
  const essence = type?.split(';')[0]?.trim().toLowerCase() ?? '';
  return essence === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(essence);
}

function notJson(type: string | null): Response {
  return problem(415, 'unsupported-media-type', 'Body is not JSON', {
    detail: type ? say('details.notJson', { type: type.split(';')[0] ?? type }) : say('details.noContentType'),
    errors: [{ field: 'Content-Type', message: say('fields.mustBeJson') }],
  });
}

function tooLarge(): Response {
  return problem(
    413,
    'body-too-large',
    'Request body too large',
    { detail: say('details.bodyTooLarge', { bytes: String(MAX_BODY_BYTES) }) },
    // The rest of the body is not wanted: Node.js closes the connection rather than read it to reuse it.
    { connection: 'close' },
  );
}

function malformed(detail: Say): Response {
  return problem(400, 'malformed-json', 'Malformed JSON', { detail, errors: [{ field: '(body)', message: detail }] });
}
