import { describe, expect, it } from 'vitest';
import { parseEnv } from './env.ts';
import { clusterUrlProblem, isRedisClusterUrl, parseRedisClusterUrl } from './redis-cluster-url.ts';

describe('the redis-cluster:// form of REDIS_URL', () => {
  it('reads the seed nodes, in order', () => {
    expect(parseRedisClusterUrl('redis-cluster://127.0.0.1:7000,127.0.0.1:7001,cache-2.internal:7002')).toEqual({
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
        { host: 'cache-2.internal', port: 7002 },
      ],
      username: undefined,
      password: undefined,
      tls: false,
    });
  });

  it('reads one node, IPv6 in brackets, a trailing slash or database 0', () => {
    expect(parseRedisClusterUrl('redis-cluster://[::1]:7000/').nodes).toEqual([{ host: '::1', port: 7000 }]);
    expect(parseRedisClusterUrl('redis-cluster://a:1, b:2/0').nodes).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
    ]);
  });

  it('reads credentials (percent-encoded) for every node, and rediss-cluster:// as TLS', () => {
    expect(parseRedisClusterUrl('rediss-cluster://app:p%40ss%2Cword@a:7000,b:7000')).toMatchObject({
      username: 'app',
      password: 'p@ss,word',
      tls: true,
    });
    expect(parseRedisClusterUrl('redis-cluster://:secret@a:7000')).toMatchObject({
      username: undefined,
      password: 'secret',
    });
    expect(parseRedisClusterUrl('redis-cluster://secret@a:7000').password).toBe('secret');
  });

  it('says what is wrong, one line, with the expected form', () => {
    const cases: Array<[string, RegExp]> = [
      ['redis-cluster://', /at least one host:port/],
      ['redis-cluster://a:7000,,b:7001', /at least one host:port/],
      ['redis-cluster://a,b', /"a" is not host:port/],
      ['redis-cluster://a:70000', /port 70000 is out of range/],
      ['redis-cluster://a:0', /port 0 is out of range/],
      ['redis-cluster://a:7000/3', /only database 0/],
      ['redis-cluster://a:7000?x=1', /not host:port/],
      ['redis-cluster://a:7000/x', /"\/x" may not follow/],
      ['redis-cluster://us er@a b:7000', /not host:port/],
      ['redis-cluster://a..b:7000', /not a host name/],
      ['redis-cluster://p%zz@a:7000', /percent-encoded/],
      ['redis-cluster:a:7000', /must start with redis-cluster:\/\//],
    ];
    for (const [url, reason] of cases) {
      const problem = clusterUrlProblem(url);
      expect(problem, url).toMatch(reason);
      expect(problem, url).toContain('redis-cluster://host:port,host:port');
      expect(problem, url).not.toContain('\n');
    }
  });

  it('tells the cluster form from a single server by its scheme', () => {
    expect(isRedisClusterUrl('redis-cluster://a:1')).toBe(true);
    expect(isRedisClusterUrl('REDISS-CLUSTER://a:1')).toBe(true);
    expect(isRedisClusterUrl('redis://a:1')).toBe(false);
    expect(isRedisClusterUrl('rediss://a:1')).toBe(false);
  });
});

describe('REDIS_URL in lib/env.ts', () => {
  it('accepts a cluster URL as given', () => {
    expect(parseEnv({ REDIS_URL: 'redis-cluster://127.0.0.1:7000,127.0.0.1:7001' }).REDIS_URL).toBe(
      'redis-cluster://127.0.0.1:7000,127.0.0.1:7001',
    );
  });

  it('names the variable and the cluster problem, and keeps the single-server message', () => {
    expect(() => parseEnv({ REDIS_URL: 'redis-cluster://a:7000/2' })).toThrow(
      /REDIS_URL: a Redis Cluster has only database 0 \(the form is redis-cluster:\/\/host:port,host:port\) \(got "redis-cluster:\/\/a:7000\/2"\)/,
    );
    expect(() => parseEnv({ REDIS_URL: 'not-a-url' })).toThrow(
      /REDIS_URL: must be a URL starting with redis:\/\/ or rediss:\/\/ \(got "not-a-url"\)/,
    );
  });
});
