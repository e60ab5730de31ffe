// The per-caller limit against the real Redis (one server, and a Redis Cluster in npm test's cluster run):
// rate-limiter-flexible's script touches one key per caller, `rate:<kind>:<caller>`, so it is one slot.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';

// npm test turns the limits off for its load; this file reads its own before lib/env.ts is first read.
vi.stubEnv('RATE_LIMIT_PAYMENTS_PER_MINUTE', '3');
afterAll(() => vi.unstubAllEnvs());

describe('the rate limit, counted in Redis', () => {
  it('lets a caller make its 3 payments a minute, refuses the 4th with 429 and Retry-After, and counts callers apart', async () => {
    const { limitRate } = await import('./rate-limit.ts');
    const caller = `c.rate-${randomBytes(4).toString('hex')}`;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await limitRate('payments', caller));
    expect(answers.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(answers[3]?.status).toBe(429);
    expect(Number(answers[3]?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limitRate('payments', `${caller}-other`)).toBeUndefined();
  });
});
