// nginx's access log (one JSON object per POST, nginx-config.ts) as the timeline's gateway lane: one event
// per attempt, naming the instance, what it did, and why the gateway moved on. Pure.
import { reason, said } from '../../lib/lab/reasons.ts';
import type { TimelineEvent } from '../../lib/lab/timeline-event.ts';
import type { Upstream } from './nginx-config.ts';

export type AccessLogEntry = {
  at: number;
  request_id: string;
  method: string;
  uri: string;
  status: number;
  request_time: number;
  order_no: string;
  upstream_addr: string;
  upstream_status: string;
  upstream_response_time: string;
  upstream_header_time: string;
};

/** nginx separates attempts with ", " (and groups of an internal redirect with " : "). */
const attemptsOf = (value: string) => (value === '' ? [] : value.split(/, | : /));
const seconds = (value: string | undefined) => {
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : 0;
};

export function parseAccessLogLine(line: string): AccessLogEntry | undefined {
  try {
    const entry = JSON.parse(line) as Partial<AccessLogEntry>;
    return typeof entry.request_id === 'string' && typeof entry.at === 'number' ? (entry as AccessLogEntry) : undefined;
  } catch {
    return undefined;
  }
}

/** The lane of one request through the gateway: its attempts, in order, timed from when the request arrived. */
export function gatewayLane(entry: AccessLogEntry, upstreams: Upstream[], timeoutMs: number): TimelineEvent[] {
  const addresses = attemptsOf(entry.upstream_addr);
  const statuses = attemptsOf(entry.upstream_status);
  const times = attemptsOf(entry.upstream_response_time);
  const headerTimes = attemptsOf(entry.upstream_header_time);
  const startedAt = Math.round((entry.at - entry.request_time) * 1000);
  const requestId = `gw-${entry.request_id.slice(0, 12)}`;
  let offsetMs = 0;
  return addresses.map((address, index) => {
    const attempt = index + 1;
    const port = Number(address.split(':').pop());
    const instance = upstreams.find((u) => u.port === port)?.name ?? address;
    const durationMs = Math.round(seconds(times[index]) * 1000);
    const status = statuses[index] ?? '';
    // An attempt that got response headers was answered, whatever the status; otherwise nginx's own 504 is a
    // timeout and its 502 a failed connection (a refused or dropped one: the instance is gone).
    const answered = headerTimes[index] !== undefined && headerTimes[index] !== '-';
    const decision = answered ? 'answered' : status === '504' ? 'timeout' : 'failed';
    const last = attempt === addresses.length;
    const event: TimelineEvent = {
      requestId,
      orderNo: entry.order_no,
      channel: 'gateway',
      instance,
      step: 'gateway',
      decision,
      // What the instance did, why the gateway moved on, and what the caller got when no instance answered.
      ...said(
        reason('gatewayAttempt', {
          method: entry.method,
          uri: entry.uri,
          attempt,
          instance,
          result: decision,
          status,
          timeoutMs,
          last: last ? 'yes' : 'no',
          callerGets: last && !answered ? entry.status : 'none',
        }),
      ),
      durationMs,
      at: startedAt + offsetMs,
    };
    offsetMs += durationMs;
    return event;
  });
}
