// The cluster's gateway: forwards each request to one app instance and, when that instance does not
// answer in time or dies, sends the same request (POSTs included) to the other one, as nginx's
// `proxy_next_upstream error timeout non_idempotent` or an Envoy retry policy would. This is the
// infrastructure retry (the article's sources 3 and 4) that the request key and the database must absorb.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { GatewaySettings } from '../../lib/lab/settings.ts';
import type { TimelineEvent } from '../../lib/lab/timeline-event.ts';

export type Upstream = { name: string; port: number };

const MAX_BODY = 1024 * 1024;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

export function startGateway(options: {
  port: number;
  upstreams: Upstream[];
  settings: () => GatewaySettings;
  publish?: (event: TimelineEvent) => void;
}): Promise<{ close(): Promise<void> }> {
  let next = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) return answer(res, 413, 'Request body too large for the gateway');
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    const { timeoutMs, retries } = options.settings();
    // A pinned first attempt (`x-gateway-route: a`) lets a workshop or a test choose the instance to kill.
    const pinned = options.upstreams.findIndex((u) => u.name === req.headers['x-gateway-route']);
    let index = pinned >= 0 ? pinned : next++ % options.upstreams.length;
    const lane = req.method === 'POST' ? laneFor(req, body, options.publish) : undefined;

    for (let attempt = 1; attempt <= retries + 1; attempt++) {
      const upstream = options.upstreams[index % options.upstreams.length] as Upstream;
      const started = performance.now();
      const result = await forward(req, body, upstream, timeoutMs, agent);
      const ms = Math.round(performance.now() - started);
      if (result.kind === 'response') {
        lane?.(
          upstream.name,
          'answered',
          `attempt ${attempt}: ${upstream.name} answered ${result.response.statusCode}`,
          ms,
        );
        const headers: http.OutgoingHttpHeaders = {
          ...result.response.headers,
          'x-upstream': upstream.name,
          'x-gateway-attempts': String(attempt),
        };
        for (const name of HOP_BY_HOP) delete headers[name];
        res.writeHead(result.response.statusCode ?? 502, headers);
        result.response.pipe(res);
        return;
      }
      const why = result.kind === 'timeout' ? `no answer within ${timeoutMs} ms` : `instance failed (${result.error})`;
      lane?.(
        upstream.name,
        result.kind,
        `attempt ${attempt}: ${upstream.name}: ${why}${attempt <= retries ? '; retrying on the next instance' : ''}`,
        ms,
      );
      index++;
    }
    answer(res, 504, 'No instance answered in time', { 'retry-after': '1' });
  });

  return new Promise((resolve) =>
    server.listen(options.port, '127.0.0.1', () =>
      resolve({
        close: () =>
          new Promise((done) => {
            agent.destroy();
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    ),
  );
}

type Forwarded =
  | { kind: 'response'; response: http.IncomingMessage }
  | { kind: 'timeout' }
  | { kind: 'failed'; error: string };

function forward(
  req: http.IncomingMessage,
  body: Buffer,
  upstream: Upstream,
  timeoutMs: number,
  agent: http.Agent,
): Promise<Forwarded> {
  return new Promise((resolve) => {
    const headers: http.OutgoingHttpHeaders = { ...req.headers, 'content-length': String(body.length) };
    for (const name of HOP_BY_HOP) delete headers[name];
    headers['x-forwarded-for'] = req.socket.remoteAddress ?? '127.0.0.1';
    const request = http.request(
      { host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers, agent },
      (response) => {
        clearTimeout(timer);
        resolve({ kind: 'response', response });
      },
    );
    // The gateway gives up on this instance; the instance itself goes on with the request.
    const timer = setTimeout(() => {
      request.destroy();
      resolve({ kind: 'timeout' });
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ kind: 'failed', error: error.code ?? error.message });
    });
    request.end(body);
  });
}

function answer(res: http.ServerResponse, status: number, title: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  res.end(JSON.stringify({ type: '/problems/gateway-timeout', title, status }));
}

function laneFor(req: http.IncomingMessage, body: Buffer, publish?: (event: TimelineEvent) => void) {
  if (!publish) return undefined;
  const requestId = `gw-${randomBytes(5).toString('hex')}`;
  const orderNo = /ord_[0-9a-z]{16}/.exec(`${req.url} ${body.toString('utf8', 0, 4096)}`)?.[0] ?? '';
  return (instance: string, decision: string, detail: string, durationMs: number) =>
    publish({
      requestId,
      orderNo,
      channel: 'gateway',
      instance,
      step: 'gateway',
      decision,
      detail: `${req.method} ${req.url} · ${detail}`,
      durationMs,
      at: Date.now(),
    });
}
