// The limits against the real Redis (one server, and a Redis Cluster in npm test's cluster run):
// rate-limiter-flexible's script touches one key per count, `rate:<kind>:<caller>` or
// `rate:<kind>:address:<address>`, so each is one slot.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { PEER_HEADER } from './client-address.ts';

// npm test turns the limits off for its load; this file reads its own before lib/env.ts is first read.
vi.stubEnv('RATE_LIMIT_PAYMENTS_PER_MINUTE', '3');
vi.stubEnv('RATE_LIMIT_CALLERS_PER_ADDRESS', '2');
vi.stubEnv('TRUSTED_PROXIES', '10.9.0.0/16');
afterAll(() => vi.unstubAllEnvs());

const unique = () => randomBytes(4).toString('hex');
/** An address of this test's own, from IPv6's documentation range: no other test's counts are in its way. */
const ipv6 = () => `2001:db8::${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;

const from = (peer: string, forwardedFor?: string) =>
  new Headers({ [PEER_HEADER]: peer, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) });

describe('the rate limit, counted in Redis', () => {
  it('lets a caller make its 3 payments a minute, refuses the 4th with 429 and Retry-After, and counts callers apart', async () => {
    const { limitRate } = await import('./rate-limit.ts');
    const caller = `c.rate-${unique()}`;
    const headers = from(ipv6());
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await limitRate('payments', caller, headers));
    expect(answers.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(answers[3]?.status).toBe(429);
    expect(Number(answers[3]?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limitRate('payments', `${caller}-other`, headers)).toBeUndefined();
  });

  it('counts an address across the callers it names: a new caller each time costs the same (issue 28, finding 3)', async () => {
    const { limitRate } = await import('./rate-limit.ts');
    const headers = from(ipv6());
    const answers = [];
    // Two callers' worth (6): a fresh X-Client-Id per request, as the attacker of issue 28 did.
    for (let i = 0; i < 7; i++) answers.push((await limitRate('payments', `c.fresh-${unique()}`, headers))?.status);
    expect(answers).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, 429]);
    // Another address is not limited by this one.
    expect(await limitRate('payments', `c.fresh-${unique()}`, from(ipv6()))).toBeUndefined();
  });

  it('takes the address from the socket, and from X-Forwarded-For only behind a trusted proxy (issue 28, finding 5)', async () => {
    const { addressOf, limitRate } = await import('./rate-limit.ts');
    const peer = ipv6();
    // A client's own X-Forwarded-For names whatever it likes: not believed, the socket's address counts.
    expect(addressOf(from(peer, '203.0.113.7'))).toBe(peer);
    const answers = [];
    for (let i = 0; i < 7; i++) {
      answers.push((await limitRate('payments', undefined, from(peer, `203.0.113.${i}`)))?.status);
    }
    expect(answers.at(-1)).toBe(429);
    // Behind the gateway (10.9.0.0/16): the last hop it did not add, whatever the client prepended.
    expect(addressOf(from('10.9.0.1', '203.0.113.7'))).toBe('203.0.113.7');
    expect(addressOf(from('10.9.0.1', 'forged, 203.0.113.8, 10.9.3.4'))).toBe('203.0.113.8');
    expect(addressOf(from('::ffff:10.9.0.1', '::ffff:203.0.113.9'))).toBe('203.0.113.9');
    expect(addressOf(from('10.9.0.1', 'not-an-address'))).toBe('10.9.0.1');
    expect(addressOf(new Headers())).toBe('unknown');
  });

  it('counts tries of the presenter’s secret per address, and gives a right one its point back', async () => {
    const { trySecret, SIGN_INS_PER_ADDRESS } = await import('./rate-limit.ts');
    const headers = from(ipv6());
    for (let i = 0; i < 3; i++) expect(await trySecret(headers, () => true)).toBe('right');
    const tries = [];
    for (let i = 0; i < SIGN_INS_PER_ADDRESS + 1; i++) tries.push(await trySecret(headers, () => false));
    expect(tries.slice(0, SIGN_INS_PER_ADDRESS)).toEqual(Array(SIGN_INS_PER_ADDRESS).fill('wrong'));
    const limited = tries.at(-1);
    expect(typeof limited === 'object' && limited.limited.status).toBe(429);
    // Limited, the right secret is refused too (else a guesser would learn when it guessed right).
    const right = await trySecret(headers, () => true);
    expect(typeof right === 'object' && right.limited.status).toBe(429);
  });

  it('counts tries of the secret for the whole room too: a guesser with many addresses is refused', async () => {
    const { trySecret, SIGN_INS_PER_ADDRESS, SIGN_INS_PER_ROOM } = await import('./rate-limit.ts');
    const room = `room-${unique()}`;
    const addresses = Array.from({ length: SIGN_INS_PER_ROOM / SIGN_INS_PER_ADDRESS + 1 }, () => ipv6());
    const outcomes = [];
    for (const peer of addresses) {
      for (let i = 0; i < SIGN_INS_PER_ADDRESS; i++) {
        const tried = await trySecret(from(peer), () => false, room);
        outcomes.push(typeof tried === 'object' ? tried.limited.status : tried);
      }
    }
    expect(outcomes.filter((outcome) => outcome === 'wrong')).toHaveLength(SIGN_INS_PER_ROOM);
    expect(outcomes.slice(SIGN_INS_PER_ROOM)).toEqual(Array(SIGN_INS_PER_ADDRESS).fill(429));
  });
});
