import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { playwrightFailures, vitestFailures } from './failures';

const dir = mkdtempSync(path.join(tmpdir(), 'failures-'));
const write = (name: string, report: unknown) => {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(report));
  return file;
};

describe('the failed tests npm test names at its end', () => {
  it('names each failed vitest test by file and full name, and a file that failed before its tests', () => {
    const file = write('vitest.json', {
      testResults: [
        {
          name: '/repo/lib/a.test.ts',
          status: 'failed',
          assertionResults: [
            { fullName: 'a passes', status: 'passed' },
            {
              fullName: 'a fails',
              status: 'failed',
              failureMessages: ['AssertionError: expected 2 to be 1\n\n- Expected\n+ Received\n\n- 1\n+ 2\n at …'],
            },
          ],
        },
        {
          name: '/repo/lib/b.test.ts',
          status: 'failed',
          message: 'Cannot find module x\n  at …',
          assertionResults: [],
        },
        { name: '/repo/lib/c.test.ts', status: 'passed', assertionResults: [{ fullName: 'c', status: 'passed' }] },
      ],
    });
    expect(vitestFailures(file, '/repo')).toEqual([
      'lib/a.test.ts › a fails\n      AssertionError: expected 2 to be 1\n      - Expected\n      + Received\n      - 1',
      'lib/b.test.ts: Cannot find module x',
    ]);
  });

  it('names each failed or flaky Playwright test by file, line and its describes', () => {
    const file = write('playwright.json', {
      suites: [
        {
          title: 'x.spec.ts',
          file: 'x.spec.ts',
          specs: [{ title: 'top', line: 3, tests: [{ status: 'expected' }] }],
          suites: [
            {
              title: 'outer',
              file: 'x.spec.ts',
              specs: [],
              suites: [
                {
                  title: 'inner',
                  file: 'x.spec.ts',
                  specs: [
                    {
                      title: 'fails',
                      line: 9,
                      tests: [
                        {
                          status: 'unexpected',
                          results: [
                            {
                              errors: [
                                {
                                  message:
                                    '\u001b[31mError: expect(received).toBe(expected)\u001b[39m\n\nExpected: \u001b[32m409\u001b[39m\nReceived: \u001b[31m201\u001b[39m',
                                },
                              ],
                            },
                          ],
                        },
                      ],
                    },
                    { title: 'flaky', line: 12, tests: [{ status: 'flaky' }] },
                    { title: 'skipped', line: 15, tests: [{ status: 'skipped' }] },
                  ],
                },
              ],
            },
          ],
        },
      ],
      errors: [{ message: 'web server exited\nmore' }],
    });
    expect(playwrightFailures(file)).toEqual([
      'e2e/x.spec.ts:9 › outer › inner › fails\n      Error: expect(received).toBe(expected)\n      Expected: 409\n      Received: 201',
      'e2e/x.spec.ts:12 › outer › inner › flaky',
      '(outside any test) web server exited',
    ]);
  });

  it('names nothing when a run wrote no report', () => {
    expect(vitestFailures(path.join(dir, 'absent.json'), '/repo')).toEqual([]);
    expect(playwrightFailures(path.join(dir, 'absent.json'))).toEqual([]);
  });
});
