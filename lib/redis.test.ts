// The client REDIS_URL makes, without a server: which kind, and how fast it gives up when nothing answers.
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { connectRedis } from './redis.ts';

// Port 1 on loopback: nothing listens there, so every connection is refused at once.
const NOWHERE = '127.0.0.1:1';

describe('connectRedis', () => {
  it('makes a Cluster client for redis-cluster://, a single-server one for redis://', () => {
    const cluster = connectRedis(`redis-cluster://${NOWHERE},127.0.0.1:2`);
    const single = connectRedis(`redis://${NOWHERE}`);
    cluster.on('error', () => {});
    single.on('error', () => {});
    try {
      expect(cluster).toBeInstanceOf(Cluster);
      expect(single).toBeInstanceOf(Redis);
    } finally {
      cluster.disconnect();
      single.disconnect();
    }
  });

  it('a cluster that cannot be reached fails a command within its five-second deadline, as one server does', async () => {
    const cluster = connectRedis(`redis-cluster://${NOWHERE}`);
    cluster.on('error', () => {});
    try {
      const started = performance.now();
      await expect(cluster.get('idem:{c.x:k}')).rejects.toThrow(/timed out/i);
      expect(performance.now() - started).toBeLessThan(6_500);
    } finally {
      cluster.disconnect();
    }
  }, 10_000);
});
