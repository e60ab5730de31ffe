// The `Prefer` request header (RFC 7240) as far as this API honours it: `wait=N`, how many seconds a duplicate
// that finds the first request still running may wait for its outcome before it is told "in progress".
// Pure. A preference the server does not understand, or a malformed one, is ignored (RFC 7240 §2): the
// request is answered as without it. The wait is capped; `Preference-Applied` says the wait that was applied.

/** The longest a request may wait for the first request's outcome. */
export const MAX_WAIT_SECONDS = 10;

/** The seconds of `wait` the request prefers, capped at MAX_WAIT_SECONDS; undefined when it states none. */
export function preferredWaitSeconds(header: string | null): number | undefined {
  if (!header) return undefined;
  for (const preference of header.split(',')) {
    // A preference's own value comes before its parameters (";…"): `wait=10; foo=bar`.
    const [head = ''] = preference.split(';');
    const match = /^\s*wait\s*=\s*(?:"(\d{1,6})"|(\d{1,6}))\s*$/i.exec(head);
    const seconds = match ? Number(match[1] ?? match[2]) : undefined;
    if (seconds !== undefined) return Math.min(seconds, MAX_WAIT_SECONDS);
  }
  return undefined;
}

/** The Preference-Applied header of a request that waited `seconds`. */
export function waitApplied(seconds: number): Record<string, string> {
  return { 'preference-applied': `wait=${seconds}` };
}
