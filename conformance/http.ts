// The kit's one way out: every request goes to the target the user named, through here, within the run's budget
// of requests and time. Each answer is read whole (its status, headers and text) or recorded as none (the caller's
// own timeout, or a connection that failed): a lost answer is a case's input, never an error of the kit's.
import type { KitRequest, KitResponse, Send } from './adapter.ts';

export type Budget = { maxRequests: number; deadline: number };

/** The run ran out of its budget: the case it was in cannot finish (reported as failed, with why). */
export class BudgetSpent extends Error {
  constructor(what: string) {
    super(what);
    this.name = 'BudgetSpent';
  }
}

/**
 * A sender for `target` (its origin only: a path that names another host is refused), adding `headers` to
 * every request, counting requests against the budget.
 */
export function senderFor(
  target: URL,
  headers: Record<string, string>,
  budget: Budget,
  defaultTimeoutMs: number,
): Send & { sent: () => number } {
  let sent = 0;
  const send = async (request: KitRequest): Promise<KitResponse> => {
    const url = new URL(request.path, target);
    if (url.origin !== target.origin) throw new Error(`${request.path} is not on the target ${target.origin}`);
    if (sent >= budget.maxRequests) throw new BudgetSpent(`the run's ${budget.maxRequests} requests are spent`);
    const left = budget.deadline - Date.now();
    if (left <= 0) throw new BudgetSpent('the run’s time is spent');
    sent++;
    const started = Date.now();
    const timeoutMs = Math.min(request.timeoutMs ?? defaultTimeoutMs, left);
    const hasBody = request.body !== undefined;
    try {
      const response = await fetch(url, {
        method: request.method ?? 'POST',
        headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...headers, ...request.headers },
        body: hasBody ? JSON.stringify(request.body) : undefined,
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      const text = await response.text();
      return {
        kind: 'answered',
        status: response.status,
        headers: Object.fromEntries(response.headers),
        text,
        ms: Date.now() - started,
      };
    } catch (error) {
      const why =
        error instanceof DOMException && error.name === 'TimeoutError'
          ? `no answer within ${timeoutMs} ms`
          : `no answer: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : error}`;
      return { kind: 'no answer', why, ms: Date.now() - started };
    }
  };
  return Object.assign(send, { sent: () => sent });
}

/** The body as JSON, or undefined. */
export function jsonOf(response: KitResponse): unknown {
  if (response.kind !== 'answered') return undefined;
  try {
    return JSON.parse(response.text);
  } catch {
    return undefined;
  }
}

/** One line of evidence: "201 (412 ms)", "409 Retry-After: 1", "no answer within 400 ms". */
export function told(response: KitResponse, ...headers: string[]): string {
  if (response.kind !== 'answered') return response.why;
  const shown = headers.flatMap((name) => (response.headers[name] ? [`${name}: ${response.headers[name]}`] : []));
  return `${[String(response.status), ...shown].join(' ')} (${response.ms} ms)`;
}

export const isSuccess = (response: KitResponse): response is Extract<KitResponse, { kind: 'answered' }> =>
  response.kind === 'answered' && response.status >= 200 && response.status < 300;

export const statusOf = (response: KitResponse): number | undefined =>
  response.kind === 'answered' ? response.status : undefined;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
