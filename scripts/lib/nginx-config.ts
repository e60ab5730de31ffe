// The cluster's gateway is a real nginx, and this is its configuration, written from the lab's gateway
// settings. Pure: the launcher writes it to a stable path (.data/demo/nginx/nginx.conf), reloads nginx
// with it, and the lab shows it, because it is the lesson: three directives decide whether a payment that
// timed out on one instance is sent to the other one.
import type { GatewaySettings } from '../../lib/lab/settings.ts';

export type Upstream = { name: string; port: number };

export type NginxPlan = {
  /** nginx's prefix: its pid, logs and temporary files live here (absolute). */
  prefix: string;
  port: number;
  upstreams: Upstream[];
  settings: GatewaySettings;
};

/** The header that pins a request's first attempt to one instance (a workshop kills the one it chose). */
export const PIN_HEADER = 'x-gateway-route';

/** One JSON object per POST: what the launcher turns into the timeline's gateway lane (nginx-log.ts). */
const LOG_FORMAT = [
  '"at":$msec',
  '"request_id":"$request_id"',
  '"method":"$request_method"',
  '"uri":"$request_uri"',
  '"status":$status',
  '"request_time":$request_time',
  '"order_no":"$order_no"',
  '"upstream_addr":"$upstream_addr"',
  '"upstream_status":"$upstream_status"',
  '"upstream_response_time":"$upstream_response_time"',
  '"upstream_header_time":"$upstream_header_time"',
].join(',');

const poolName = (upstream: Upstream) => `${upstream.name}_first`;

export function renderNginxConfig(plan: NginxPlan): string {
  const { prefix, port, upstreams, settings } = plan;
  const timeout = `${settings.timeoutMs}ms`;
  const server = (u: Upstream, backup = false) =>
    // max_fails=0: every request tries its instances afresh (nginx would otherwise skip an instance for 10 s
    // after one failure, and a workshop's second try would behave differently from its first).
    `    server 127.0.0.1:${u.port} max_fails=0${backup ? ' backup' : ''};  # instance ${u.name}`;
  const pools = upstreams.map(
    (first) => `  upstream ${poolName(first)} {
${server(first)}
${upstreams
  .filter((u) => u !== first)
  .map((u) => server(u, true))
  .join('\n')}
    keepalive 16;
  }`,
  );
  return `# The gateway of \`npm run demo:cluster\`, written by scripts/lib/nginx-config.ts from the lab's gateway
# settings (timeout ${settings.timeoutMs} ms, ${settings.retries} ${settings.retries === 1 ? 'retry' : 'retries'}) and reloaded with \`nginx -s reload\` when they change.
# Change them in the lab (/lab, "Gateway"), not here: this file is rewritten.
daemon off;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;

events {
  worker_connections 1024;
}

http {
  client_body_temp_path ${prefix}/tmp/body;
  proxy_temp_path ${prefix}/tmp/proxy;
  fastcgi_temp_path ${prefix}/tmp/fastcgi;
  uwsgi_temp_path ${prefix}/tmp/uwsgi;
  scgi_temp_path ${prefix}/tmp/scgi;

  # The order a POST is about (in its path or its body), so that the timeline can draw it with the order's
  # lanes. Only the order number is logged, never the body.
  map "$request_uri $request_body" $order_no {
    "~(?<order>ord_[0-9a-z]{16})" $order;
    default "";
  }
  map $request_method $is_post {
    POST 1;
    default 0;
  }
  # Per attempt: which instance ($upstream_addr), what it answered ($upstream_status) and how long it took.
  log_format gateway escape=json '{${LOG_FORMAT}}';
  access_log ${prefix}/access.log gateway if=$is_post;

  # Round robin over the instances; a request with \`${PIN_HEADER}: a\` goes to instance a first.
  upstream instances {
${upstreams.map((u) => server(u)).join('\n')}
    keepalive 16;
  }
${pools.join('\n')}
  map $http_${PIN_HEADER.replaceAll('-', '_')} $instances {
${upstreams.map((u) => `    ${u.name} ${poolName(u)};`).join('\n')}
    default instances;
  }

  server {
    listen 127.0.0.1:${port};

    location / {
      proxy_pass http://$instances;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Request-Id $request_id;

      # How long an instance may take to accept, read and answer the request: past this, it "timed out".
      proxy_connect_timeout ${timeout};
      proxy_send_timeout ${timeout};
      proxy_read_timeout ${timeout};

      # THE LESSON. On a connection error or a timeout, send the same request to the next instance, and
      # \`non_idempotent\` says: POSTs too. The first instance may still be charging the card: only the request
      # key and the database make the second attempt safe. Without \`non_idempotent\`, nginx retries only GET,
      # HEAD, PUT, DELETE, OPTIONS and TRACE, and answers a POST that timed out with 504.
      proxy_next_upstream error timeout non_idempotent;
      # Attempts in all: the first and ${settings.retries} ${settings.retries === 1 ? 'retry' : 'retries'}.
      proxy_next_upstream_tries ${settings.retries + 1};
    }

    # Every instance failed or timed out: a problem the API's callers can read, and a hint to retry.
    error_page 502 504 = @no_instance;
    location @no_instance {
      default_type application/problem+json;
      add_header Retry-After 1 always;
      return 504 '{"type":"/problems/gateway-timeout","title":"No instance answered in time","status":504}';
    }
  }
}
`;
}
