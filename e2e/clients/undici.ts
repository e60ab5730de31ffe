// The undici recipe: a RetryAgent around an Agent. Its defaults retry neither POST, nor 409, nor its own
// headers timeout (node_modules/undici/lib/handler/retry-handler.js), so all three are named here.
import { Agent, RetryAgent, request } from 'undici';

export async function pay(
  baseUrl: string,
  payment: { orderNo: string; amountCents: number },
  options: { idempotencyKey: string; clientId: string; timeoutMs: number },
): Promise<{ status: number; headers: Record<string, string>; body: unknown; attempts: number }> {
  let attempts = 0;
  // Counts what reaches the wire: the RetryAgent dispatches every attempt through this agent.
  const agent = new Agent().compose((dispatch) => (opts, handler) => {
    attempts += 1;
    return dispatch(opts, handler);
  });
  // recipe:start
  const client = new RetryAgent(agent, {
    // POST is safe to repeat here: the Idempotency-Key makes every attempt the same payment.
    methods: ['POST'],
    // 409: the first attempt is still running; Retry-After (1 s) is honoured as the delay.
    statusCodes: [409, 429, 500, 502, 503, 504],
    // undici's defaults, plus its own timeouts: a timed-out attempt has usually been charged already.
    errorCodes: [
      'ECONNRESET',
      'ECONNREFUSED',
      'ENOTFOUND',
      'ENETDOWN',
      'ENETUNREACH',
      'EHOSTDOWN',
      'EHOSTUNREACH',
      'EPIPE',
      'UND_ERR_SOCKET',
      'UND_ERR_CONNECT_TIMEOUT',
      'UND_ERR_HEADERS_TIMEOUT',
    ],
    maxRetries: 5,
    // The last answer with its body (a 409 after every retry), rather than an error without it.
    throwOnError: false,
  });
  const response = await request(`${baseUrl}/api/payments`, {
    method: 'POST',
    dispatcher: client,
    // Per attempt: every retry is a new dispatch with its own headers timer.
    headersTimeout: options.timeoutMs,
    headers: {
      'content-type': 'application/json',
      'idempotency-key': options.idempotencyKey, // chosen once per payment; every retry resends it
      'x-client-id': options.clientId,
    },
    body: JSON.stringify(payment),
  });
  // recipe:end
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const text = await response.body.text();
  await client.close();
  return { status: response.statusCode, headers, body: text ? JSON.parse(text) : undefined, attempts };
}
