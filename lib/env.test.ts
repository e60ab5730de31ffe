import { describe, expect, it } from 'vitest';
import { InvalidEnvError, parseEnv } from './env.ts';

describe('parseEnv', () => {
  it('applies the defaults when nothing is set', () => {
    const env = parseEnv({});
    expect(env.PORT).toBe(3000);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.LAB_ENABLED).toBe(true);
    expect(env.CHECKOUT_TOKEN_TTL_SECONDS).toBe(300);
  });

  it('accepts service URLs with the right scheme', () => {
    const env = parseEnv({ DATABASE_URL: 'postgresql://u:p@db:5432/x', REDIS_URL: 'rediss://cache:6380' });
    expect(env.DATABASE_URL).toBe('postgresql://u:p@db:5432/x');
    expect(env.REDIS_URL).toBe('rediss://cache:6380');
  });

  it('names the variable and what is wrong, one line each', () => {
    const attempt = () => parseEnv({ REDIS_URL: 'not-a-url', PORT: 'eighty', DATABASE_URL: 'mysql://x' });
    expect(attempt).toThrow(InvalidEnvError);
    try {
      attempt();
    } catch (error) {
      const problems = (error as InvalidEnvError).problems;
      expect(problems).toHaveLength(3);
      expect(problems.find((line) => line.startsWith('REDIS_URL:'))).toMatch(/redis:\/\/.*"not-a-url"/);
      expect(problems.find((line) => line.startsWith('DATABASE_URL:'))).toMatch(/postgres/);
      expect(problems.find((line) => line.startsWith('PORT:'))).toContain('"eighty"');
      for (const line of problems) expect(line).not.toContain('\n');
    }
  });

  it('reads the bank’s own database and whether this instance runs the background jobs', () => {
    const defaults = parseEnv({});
    expect([defaults.BANK_DATABASE_URL, defaults.BACKGROUND_JOBS]).toEqual([undefined, true]);
    const apart = parseEnv({ BANK_DATABASE_URL: 'postgresql://bank:5432/ledger', BACKGROUND_JOBS: 'false' });
    expect([apart.BANK_DATABASE_URL, apart.BACKGROUND_JOBS]).toEqual(['postgresql://bank:5432/ledger', false]);
    expect(() => parseEnv({ BANK_DATABASE_URL: 'redis://bank' })).toThrow(/BANK_DATABASE_URL: .*postgres/);
    expect(() => parseEnv({ BACKGROUND_JOBS: 'maybe' })).toThrow(/BACKGROUND_JOBS/);
  });

  it('treats an empty value as unset', () => {
    expect(parseEnv({ REDIS_URL: '' }).REDIS_URL).toBeUndefined();
  });

  describe('Redis through Sentinel', () => {
    const problemsOf = (source: Record<string, string>): string[] => {
      try {
        parseEnv(source);
        return [];
      } catch (error) {
        return (error as InvalidEnvError).problems;
      }
    };

    it('reads the Sentinels as addresses, IPv6 in brackets, spaces around the commas allowed', () => {
      const env = parseEnv({
        REDIS_SENTINELS: '10.0.0.1:26379, sentinel-b.internal:26380,[::1]:26381',
        REDIS_SENTINEL_NAME: 'payonce',
      });
      expect(env.REDIS_SENTINELS).toEqual([
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-b.internal', port: 26380 },
        { host: '::1', port: 26381 },
      ]);
      expect(env.REDIS_SENTINEL_NAME).toBe('payonce');
      expect(env.REDIS_URL).toBeUndefined();
    });

    it('names the entry that is not host:port', () => {
      for (const list of ['10.0.0.1', '10.0.0.1:26379,', 'a:0', 'a:70000', 'redis://a:26379', '::1:26379']) {
        const [line, ...more] = problemsOf({ REDIS_SENTINELS: list, REDIS_SENTINEL_NAME: 'payonce' });
        expect(more, list).toEqual([]);
        expect(line, list).toMatch(/^REDIS_SENTINELS: must be a comma-separated list of host:port/);
        expect(line, list).toContain(`(got ${JSON.stringify(list)})`);
      }
    });

    it('wants both variables or neither', () => {
      expect(problemsOf({ REDIS_SENTINELS: '127.0.0.1:26379' })).toEqual([
        expect.stringMatching(/^REDIS_SENTINEL_NAME: is required with REDIS_SENTINELS/),
      ]);
      expect(problemsOf({ REDIS_SENTINEL_NAME: 'payonce' })).toEqual([
        expect.stringMatching(/^REDIS_SENTINELS: is required with REDIS_SENTINEL_NAME/),
      ]);
      expect(problemsOf({ REDIS_SENTINEL_NAME: 'pay once', REDIS_SENTINELS: '127.0.0.1:26379' })).toEqual([
        expect.stringMatching(/^REDIS_SENTINEL_NAME: must be the name the Sentinels monitor/),
      ]);
    });

    it('refuses REDIS_URL beside them, without printing the URL (it may carry a password)', () => {
      const problems = problemsOf({
        REDIS_URL: 'redis://:s3cret@cache:6379',
        REDIS_SENTINELS: '127.0.0.1:26379',
        REDIS_SENTINEL_NAME: 'payonce',
      });
      expect(problems).toEqual([expect.stringMatching(/^REDIS_SENTINELS: cannot be used with REDIS_URL/)]);
      expect(problems.join()).not.toContain('s3cret');
    });

    it('takes an empty value as unset, as for every variable', () => {
      const env = parseEnv({ REDIS_URL: 'redis://cache:6379', REDIS_SENTINELS: '', REDIS_SENTINEL_NAME: '' });
      expect(env.REDIS_SENTINELS).toBeUndefined();
      expect(env.REDIS_URL).toBe('redis://cache:6379');
    });
  });
});
