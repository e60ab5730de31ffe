// `npm run conformance -- --target URL`: the duplicate scenarios against any payments endpoint (docs/conformance.md).
//
//   --target URL        the API to check (its origin; every request goes there and nowhere else)
//   --config FILE       an adapter module (default: this demo's API, conformance/demo-adapter.ts)
//   --defences on|off   the demo's adapter only: switch every defence off for the run's orders, to watch it fail
//   --only a,b  --skip c   cases by name (--list names them)
//   --json FILE  --junit FILE   the report as JSON, and as JUnit XML for CI systems
//   --max-requests N  --time-limit S  --slow-ms N   the run's bounds (1,000 requests, 180 s) and the slow effect
// Exit status: 0 when no case failed, 1 when one did, 2 when the run could not start, 3 when it ended unfinished.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Adapter, AdapterModule } from './adapter.ts';
import { CASES } from './cases.ts';
import { demoAdapter } from './demo-adapter.ts';
import { runConformance } from './kit.ts';
import { jsonOf, junitOf, summaryOf, tableOf } from './report.ts';

const OPTIONS = {
  target: { type: 'string' },
  config: { type: 'string' },
  defences: { type: 'string' },
  only: { type: 'string', multiple: true },
  skip: { type: 'string', multiple: true },
  json: { type: 'string' },
  junit: { type: 'string' },
  'max-requests': { type: 'string' },
  'time-limit': { type: 'string' },
  'slow-ms': { type: 'string' },
  list: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

class UsageError extends Error {}

async function main(): Promise<number> {
  const { values } = parseArgs({ args: process.argv.slice(2).filter((arg) => arg !== '--'), options: OPTIONS });
  if (values.help) return usage(0);
  if (values.list) {
    for (const c of CASES) console.log(`${c.group.padEnd(12)} ${c.name.padEnd(30)} ${c.title}`);
    return 0;
  }
  if (!values.target) throw new UsageError('--target URL is required');
  const target = new URL(values.target);
  const adapter = await adapterFrom(values);
  if (!(await reachable(target))) {
    console.error(`conformance: nothing answers at ${target.origin} (is the API running?)`);
    return 2;
  }
  const names = (lists: string[] | undefined) => lists?.flatMap((list) => list.split(',')).filter(Boolean);
  const result = await runConformance({
    target,
    adapter,
    only: names(values.only),
    skip: names(values.skip),
    maxRequests: whole(values['max-requests'], '--max-requests'),
    timeLimitMs: seconds(values['time-limit']),
    slowMs: whole(values['slow-ms'], '--slow-ms'),
  });
  console.log(tableOf(result));
  if (values.json) writeFileSync(values.json, jsonOf(result));
  if (values.junit) writeFileSync(values.junit, junitOf(result));
  return summaryOf(result).failed > 0 ? 1 : 0;
}

async function adapterFrom(values: { config?: string; defences?: string }): Promise<Adapter> {
  if (values.defences !== undefined && !['on', 'off'].includes(values.defences)) {
    throw new UsageError('--defences takes on or off');
  }
  if (!values.config) return demoAdapter({ defences: values.defences === 'off' ? 'off' : 'on' });
  const module = (await import(pathToFileURL(path.resolve(values.config)).href)) as { default?: AdapterModule };
  const exported = module.default;
  if (!exported) throw new UsageError(`${values.config} has no default export (the adapter)`);
  return typeof exported === 'function' ? exported({ defences: values.defences }) : exported;
}

/** Whether anything answers at the target's origin at all (any status will do). */
async function reachable(target: URL): Promise<boolean> {
  try {
    await fetch(target.origin, { method: 'HEAD', signal: AbortSignal.timeout(5_000), redirect: 'manual' });
    return true;
  } catch {
    return false;
  }
}

function whole(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} takes a whole number`);
  return Number(value);
}

const seconds = (value: string | undefined) => {
  const n = whole(value, '--time-limit');
  return n === undefined ? undefined : n * 1_000;
};

function usage(status: number): number {
  console.log(
    'usage: npm run conformance -- --target URL [--config FILE] [--defences on|off] [--only a,b] [--skip c]\n' +
      '         [--json FILE] [--junit FILE] [--max-requests N] [--time-limit S] [--slow-ms N] [--list]',
  );
  return status;
}

// A run that ends before main() settles (the event loop emptied with the run unfinished, seen now and then on a busy
// machine) must never look like a pass: its status is 3 unless main() set one, and it says so.
let settled = false;
process.exitCode = 3;
process.on('exit', () => {
  if (!settled) console.error('conformance: the run ended before it finished (status 3); run it again');
});
main().then(
  (status) => {
    settled = true;
    process.exit(status);
  },
  (error: unknown) => {
    settled = true;
    console.error(`conformance: ${error instanceof Error ? error.message : error}`);
    process.exit(2);
  },
);
