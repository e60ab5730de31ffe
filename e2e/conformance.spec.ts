// The conformance kit (conformance/, docs/conformance.md) against this demo: with every defence on, every case
// passes, run as README prints it (the command, its exit status, its JSON and JUnit XML); with every defence off for
// the run's orders, the cases declared to fail do fail, each with its evidence (the charges), and the others pass.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { CASES } from '../conformance/cases';
import { demoAdapter, WITHOUT_DEFENCES } from '../conformance/demo-adapter';
import { runConformance } from '../conformance/kit';
import { expect, test } from './fixtures';

test('npm run conformance against the demo: every case passes; exit 0, its JSON and JUnit XML say so', async ({
  baseURL,
}) => {
  test.setTimeout(120_000);
  const dir = await mkdtemp(path.join(tmpdir(), 'conformance-'));
  const [json, junit] = [path.join(dir, 'report.json'), path.join(dir, 'report.xml')];
  const args = ['--import', 'tsx', 'conformance/run.ts', '--target', String(baseURL), '--json', json, '--junit', junit];
  const run = () =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, args, { timeout: 100_000 }, (error, out, err) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout: out, stderr: err }),
      );
    });
  let { code, stdout, stderr } = await run();
  // On a busy machine the command now and then ends unfinished: with status 0 and no word, before its script ran
  // (under tsx's loader hooks, as payloadcms/payload#17757 reports; seen in three clean clones today, the kit's
  // table and JSON missing), or with status 3 and its own word once running (conformance/run.ts). Neither is a
  // result: it is run again, twice at most, and noted on the test.
  const unfinished = () =>
    (code === 0 && stdout === '' && stderr === '') || (code === 3 && /ended before it finished/.test(stderr));
  for (let again = 0; again < 2 && unfinished(); again++) {
    const description = `status ${code}, ${stderr || 'no output'}; ran again`;
    test.info().annotations.push({ type: 'unfinished', description });
    ({ code, stdout, stderr } = await run());
  }
  expect(code, `${stdout}\n${stderr}`).toBe(0);
  expect(stdout, stderr).toContain(`${CASES.length} passed, 0 failed, 0 skipped`);
  const report = JSON.parse(await readFile(json, 'utf8')) as { cases: Array<{ name: string; status: string }> };
  expect(report.cases.map((c) => [c.name, c.status])).toEqual(CASES.map((c) => [c.name, 'pass']));
  const xml = await readFile(junit, 'utf8');
  expect(XMLValidator.validate(xml)).toBe(true);
  expect(xml).toContain(`tests="${CASES.length}" failures="0"`);
});

test('with every defence off for its orders, the cases declared to fail fail, with the charges as evidence', async ({
  baseURL,
}) => {
  test.setTimeout(120_000);
  const result = await runConformance({ target: new URL(String(baseURL)), adapter: demoAdapter({ defences: 'off' }) });
  expect(Object.fromEntries(result.cases.map((c) => [c.name, c.status]))).toEqual(WITHOUT_DEFENCES);
  for (const c of result.cases.filter((c) => c.status === 'fail')) {
    // Each failure says what went wrong in a line of its own evidence: a status, or a count of charges.
    expect(
      c.evidence.some((line) => line.startsWith('✗')),
      c.name,
    ).toBe(true);
  }
  const charged = result.cases.filter((c) => (c.sideEffects ?? 0) > 1).map((c) => c.name);
  expect(charged).toEqual(
    expect.arrayContaining(['exact-replay', 'concurrent-same-key', 'concurrent-keys-one-intent']),
  );
});
