import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateSessionSecret } from './session-secret.ts';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'session-secret-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the demo’s session secret', () => {
  it('is made on the first start, readable by its owner only, and the same on the next start', async () => {
    const file = path.join(dir, 'demo', 'session-secret');
    const first = loadOrCreateSessionSecret(file);
    expect(first.created).toBe(true);
    expect(first.secret.length).toBeGreaterThanOrEqual(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(first.secret);
    expect(loadOrCreateSessionSecret(file)).toEqual({ secret: first.secret, created: false });
  });

  it('refuses a file too short to be a secret, naming it', async () => {
    const file = path.join(dir, 'session-secret');
    await writeFile(file, 'short\n', { mode: 0o600 });
    expect(() => loadOrCreateSessionSecret(file)).toThrow(/session-secret: the session secret must be at least 32/);
  });

  it('takes a file readable by others back to its owner only', async () => {
    const file = path.join(dir, 'session-secret');
    await writeFile(file, `${'s'.repeat(40)}\n`, { mode: 0o644 });
    expect(loadOrCreateSessionSecret(file).secret).toBe('s'.repeat(40));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});
