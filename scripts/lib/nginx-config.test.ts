import { describe, expect, it } from 'vitest';
import { renderNginxConfig } from './nginx-config.ts';
import { gatewayLane, parseAccessLogLine } from './nginx-log.ts';

const upstreams = [
  { name: 'a', port: 3001 },
  { name: 'b', port: 3002 },
];
const render = (timeoutMs: number, retries: number) =>
  renderNginxConfig({ prefix: '/data/nginx', port: 3000, upstreams, settings: { timeoutMs, retries } });
const directive = (config: string, name: string) =>
  config
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith(`${name} `));

describe('the gateway’s nginx configuration', () => {
  it('retries POSTs on an error or a timeout: the line that sends a payment twice', () => {
    expect(directive(render(2000, 1), 'proxy_next_upstream')).toEqual([
      'proxy_next_upstream error timeout non_idempotent;',
    ]);
  });

  it('takes its timeout and its attempts (the first and the retries) from the lab', () => {
    const config = render(1500, 2);
    for (const name of ['proxy_connect_timeout', 'proxy_send_timeout', 'proxy_read_timeout']) {
      expect(directive(config, name)).toEqual([`${name} 1500ms;`]);
    }
    expect(directive(config, 'proxy_next_upstream_tries')).toEqual(['proxy_next_upstream_tries 3;']);
    expect(directive(render(2000, 0), 'proxy_next_upstream_tries')).toEqual(['proxy_next_upstream_tries 1;']);
  });

  it('listens on loopback only, and pins a first attempt with x-gateway-route', () => {
    const config = render(2000, 1);
    expect(directive(config, 'listen')).toEqual(['listen 127.0.0.1:3000;']);
    expect(config).toContain('map $http_x_gateway_route $instances');
    // Pinned to a, the request falls back to b (a backup server) when a fails.
    expect(config).toMatch(
      /upstream a_first \{\s+server 127\.0\.0\.1:3001 max_fails=0;.*\n\s+server 127\.0\.0\.1:3002 max_fails=0 backup;/,
    );
    expect(config).toMatch(
      /upstream b_first \{\s+server 127\.0\.0\.1:3002 max_fails=0;.*\n\s+server 127\.0\.0\.1:3001 max_fails=0 backup;/,
    );
  });
});

describe('nginx’s access log as the timeline’s gateway lane', () => {
  const line = JSON.stringify({
    at: 1_000_012.539,
    request_id: '58432558687bf4ec0ae5015e9f2f5067',
    method: 'POST',
    uri: '/api/payments',
    status: 409,
    request_time: 2.024,
    order_no: 'ord_84530f320myfd3g3',
    upstream_addr: '127.0.0.1:3002, 127.0.0.1:3001',
    upstream_status: '504, 409',
    upstream_response_time: '2.001, 0.023',
    upstream_header_time: '-, 0.022',
  });

  it('draws one step per attempt: which instance, what it did, and why the gateway moved on', () => {
    const entry = parseAccessLogLine(line);
    if (!entry) throw new Error('not parsed');
    const lane = gatewayLane(entry, upstreams, 2000);
    expect(lane.map((e) => [e.instance, e.decision, e.durationMs])).toEqual([
      ['b', 'timeout', 2001],
      ['a', 'answered', 23],
    ]);
    expect(lane[0]?.detail).toBe(
      'POST /api/payments · attempt 1: b: no answer within 2000 ms; retrying on the next instance',
    );
    expect(lane[1]?.detail).toBe('POST /api/payments · attempt 2: a answered 409');
    expect(new Set(lane.map((e) => e.requestId))).toEqual(new Set(['gw-58432558687b']));
    // Timed from the request's arrival: the second attempt starts when the first gave up.
    expect((lane[1]?.at ?? 0) - (lane[0]?.at ?? 0)).toBe(2001);
    expect(lane[0]?.orderNo).toBe('ord_84530f320myfd3g3');
  });

  it('tells a dead instance from a slow one, and says what the caller got when every attempt failed', () => {
    const entry = parseAccessLogLine(
      JSON.stringify({
        ...JSON.parse(line),
        status: 504,
        upstream_status: '502, 504',
        upstream_header_time: '-, -',
        upstream_response_time: '0.001, 2.000',
      }),
    );
    if (!entry) throw new Error('not parsed');
    const [first, second] = gatewayLane(entry, upstreams, 2000);
    expect(first?.decision).toBe('failed');
    expect(second?.decision).toBe('timeout');
    expect(second?.detail).toMatch(/no answer within 2000 ms; the caller gets 504$/);
  });

  it('skips what is not one of its lines', () => {
    expect(parseAccessLogLine('not json')).toBeUndefined();
    expect(parseAccessLogLine('{"status":200}')).toBeUndefined();
  });
});
