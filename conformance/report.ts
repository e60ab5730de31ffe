// A run's result, three ways: a table for the terminal (each failure with its evidence), JSON, and JUnit XML for
// CI systems (one testsuite per group, one testcase per case; a failure's message is its first failed check and
// its text the whole evidence; a skipped case says why). The XML is written by junit-report-builder.
import junit from 'junit-report-builder';
import type { CaseResult, RunResult } from './kit.ts';

const MARK = { pass: 'pass', fail: 'FAIL', skip: 'skip' } as const;

export function summaryOf(result: RunResult): { passed: number; failed: number; skipped: number } {
  const count = (status: CaseResult['status']) => result.cases.filter((c) => c.status === status).length;
  return { passed: count('pass'), failed: count('fail'), skipped: count('skip') };
}

/** The terminal's table, then the evidence of each failed case. */
export function tableOf(result: RunResult): string {
  const width = Math.max(...result.cases.map((c) => c.name.length), 4);
  const lines = [
    `Idempotency conformance of ${result.target} (${result.adapter})`,
    '',
    `${'case'.padEnd(width)}  result  effects  ${'what it checks'}`,
    ...result.cases.map(
      (c) =>
        `${c.name.padEnd(width)}  ${MARK[c.status].padEnd(6)}  ${String(c.sideEffects ?? '-').padStart(7)}  ${c.title}`,
    ),
  ];
  for (const c of result.cases.filter((c) => c.status !== 'pass' || c.notes.length > 0)) {
    lines.push('', `${MARK[c.status]} ${c.name}`, ...c.evidence.map((line) => `  ${line}`));
    lines.push(...c.notes.map((note) => `  note: ${note}`));
  }
  const { passed, failed, skipped } = summaryOf(result);
  lines.push(
    '',
    `${passed} passed, ${failed} failed, ${skipped} skipped; ${result.requests} requests in ${(result.ms / 1000).toFixed(1)} s`,
  );
  return lines.join('\n');
}

export function jsonOf(result: RunResult): string {
  return `${JSON.stringify({ ...result, summary: summaryOf(result) }, null, 2)}\n`;
}

export function junitOf(result: RunResult): string {
  const report = junit.newBuilder().name(`idempotency conformance of ${result.target}`);
  for (const group of [...new Set(result.cases.map((c) => c.group))]) {
    const cases = result.cases.filter((c) => c.group === group);
    const suite = report
      .testSuite()
      .name(`${group} (${result.adapter})`)
      .timestamp(result.startedAt)
      .time(cases.reduce((total, c) => total + c.ms, 0) / 1000);
    for (const c of cases) {
      const test = suite
        .testCase()
        .className(`conformance.${group}`)
        .name(`${c.name}: ${c.title}`)
        .time(c.ms / 1000);
      const text = [...c.evidence, ...c.notes.map((note) => `note: ${note}`)].join('\n');
      if (c.status === 'fail') {
        const first = c.evidence.find((line) => line.startsWith('✗')) ?? 'failed';
        test.failure(first, 'conformance').standardOutput(text);
      } else if (c.status === 'skip') test.skipped().standardOutput(text);
      else if (text) test.standardOutput(text);
    }
  }
  return report.build();
}
