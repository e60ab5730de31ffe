// The command's exit status never says "passed" for a run that did not report: a run whose event loop empties with
// cases still to run (here an adapter whose subject never comes, with nothing left to wait on) ends with status 3 and
// says so. It ended with status 0 and no word before (a CI step would have passed on nothing).
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

const server = createServer((_request, response) => response.end());
let target = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  target = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('ends with status 3 and says so when the run ends before it finished', async () => {
  const adapter = path.join(tmpdir(), `conformance-never-${process.pid}.mjs`);
  await writeFile(adapter, "export default { name: 'never', subject: () => new Promise(() => {}) };\n");
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'conformance/run.ts', '--target', target, '--config', adapter, '--only', 'missing-key'],
        { timeout: 50_000 },
        (error, out, err) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout: out, stderr: err }),
      );
    },
  );
  expect({ code, stdout }).toEqual({ code: 3, stdout: '' });
  expect(stderr).toContain('the run ended before it finished');
});
