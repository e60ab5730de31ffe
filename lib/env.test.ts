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

  it('treats an empty value as unset', () => {
    expect(parseEnv({ REDIS_URL: '' }).REDIS_URL).toBeUndefined();
  });
});
