// What the failover rows share (a Redis failover, a PostgreSQL failover): a client that pays each order with a key
// of its own and retries as Retry-After says, and an app instance of the row's own, the production build, killed
// with the worker when nothing stopped it first.
import type { APIRequestContext, TestInfo } from '@playwright/test';
import { nextEnv, type RunningApp, startCapturedApp } from '../../scripts/lib/next-app';

export type Answer = { status: number; headers: Record<string, string>; text: string };

/** A client of `app` (calling itself `client`) that pays each order under the key `<keyPrefix><orderNo>`. */
export function payingClient(options: {
  app: string;
  client: string;
  keyPrefix: string;
  /** How long one request may take (the first ones wait for the bank through the failover). */
  timeoutMs: number;
  /** How many requests the retrying client makes at most. */
  attempts: number;
}) {
  const pay = async (request: APIRequestContext, orderNo: string): Promise<Answer> => {
    const response = await request.post(`${options.app}/api/payments`, {
      headers: { 'idempotency-key': `${options.keyPrefix}${orderNo}`, 'x-client-id': options.client },
      data: { orderNo, amountCents: 4200 },
      timeout: options.timeoutMs,
    });
    return { status: response.status(), headers: response.headers(), text: await response.text() };
  };
  /**
   * A well-behaved client: on 409 (still running) and 503 (a server a moment away: the client may be reconnecting
   * after the failover) it waits as Retry-After says and asks again, with the same key.
   */
  const retryUntilFinal = async (request: APIRequestContext, orderNo: string): Promise<Answer> => {
    let answer = await pay(request, orderNo);
    for (let attempt = 2; attempt <= options.attempts && (answer.status === 409 || answer.status === 503); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after'] ?? '1') * 1000));
      answer = await pay(request, orderNo);
    }
    return answer;
  };
  return { pay, retryUntilFinal };
}

/** `next start` of the production build on `port`, with `env` over the tests' own. */
export async function startOwnApp(port: number, env: Record<string, string>): Promise<RunningApp> {
  // Killed if this worker ends without its afterEach (torn down), even while it is still starting.
  return startCapturedApp({ port, env: nextEnv({ PORT: String(port), ...env }) });
}

/**
 * When the test failed, attaches what its own processes printed (the app's log, the servers'), which the
 * failure's message does not show: why an app stayed unhealthy, which server refused what.
 */
export async function attachOutputsOnFailure(
  testInfo: TestInfo,
  outputs: Record<string, (() => string) | undefined>,
): Promise<void> {
  if (testInfo.status === testInfo.expectedStatus) return;
  for (const [name, output] of Object.entries(outputs)) {
    if (output) await testInfo.attach(name, { body: output(), contentType: 'text/plain' });
  }
}
