import { describe, expect, it } from 'vitest';
import { runIdOf, serverChangeEvent } from './redis-failover.ts';

const A = { runId: 'a'.repeat(40), address: '127.0.0.1:26470' };

describe('a change of Redis server, on the timeline', () => {
  it('reads run_id from INFO server', () => {
    const info =
      '# Server\r\nredis_version:7.0.15\r\nrun_id:0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d\r\ntcp_port:26470\r\n';
    expect(runIdOf(info)).toBe('0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d');
    expect(runIdOf('# Server\r\nredis_version:7.0.15\r\n')).toBeUndefined();
  });

  it('says nothing while the server is the same one (a reconnection to it)', () => {
    expect(serverChangeEvent(A, { ...A }, 'app-a', 1)).toBeUndefined();
  });

  it('a new server at another address: a failover, and what it lost', () => {
    const event = serverChangeEvent(A, { runId: 'b'.repeat(40), address: '127.0.0.1:26471' }, 'app-a', 1);
    expect(event).toMatchObject({ channel: 'redis', step: 'redis', decision: 'failed over', orderNo: '' });
    expect(event?.detail).toContain('the primary is now 127.0.0.1:26471 (was 127.0.0.1:26470)');
    expect(event?.detail).toContain('not replicated are gone');
  });

  it('a new server at the same address: a restart', () => {
    const event = serverChangeEvent(A, { ...A, runId: 'c'.repeat(40) }, 'app-a', 1);
    expect(event).toMatchObject({ decision: 'restarted' });
    expect(event?.detail).toContain('what it had not saved is gone');
  });
});
