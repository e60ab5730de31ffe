// `npm run races -- --mutants`: each deliberate bug of test/races/mutants.ts is applied to a copy of the checkout
// (lib/, test/ and the configuration the tests read; node_modules linked), and the race explorer runs there
// against the same services until its first finding (RACE_BAIL=1). A mutant it does not catch fails the run.
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MUTANTS, type Mutant } from '../../test/races/mutants.ts';
import { ROOT } from './paths.ts';

/** The race explorer's files: the regressions and the model's traces, and the random schedules (run side by side). */
export const RACE_FILES = ['test/races/races.int.test.ts', 'test/races/races-random.int.test.ts'];

export type MutantResult = { mutant: Mutant; caught: boolean; by?: string; seconds: number };

/** Copies what the race explorer needs into a new folder, and breaks it the mutant's way. */
async function mutatedCopy(mutant: Mutant): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `payonce-mutant-${mutant.name}-`));
  for (const entry of ['lib', 'test', 'messages', 'package.json', 'tsconfig.json', 'vitest.config.ts']) {
    await cp(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const file = path.join(dir, mutant.file);
  const source = await readFile(file, 'utf8');
  const at = source.indexOf(mutant.from);
  if (at < 0 || source.indexOf(mutant.from, at + 1) >= 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(
      `mutant ${mutant.name}: its text is not in ${mutant.file} exactly once (the list must follow the code)`,
    );
  }
  await writeFile(file, source.slice(0, at) + mutant.to + source.slice(at + mutant.from.length));
  return dir;
}

function runIn(dir: string, env: NodeJS.ProcessEnv, files: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      path.join(dir, 'node_modules/.bin/vitest'),
      ['run', '--project', 'integration', ...files, '--bail', '1'],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', () => resolve({ code: 1, output }));
    child.on('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** The name of the first test that failed, from vitest's output. */
function firstFailure(output: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest colours its output.
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const line = plain.split('\n').find((candidate) => /^\s*(×|FAIL)\s/.test(candidate) && candidate.includes('>'));
  return line?.replace(/^\s*(×|FAIL)\s+/, '').trim();
}

export async function runMutants(options: {
  env: NodeJS.ProcessEnv;
  /** The model's traces (test/races/model/run.ts), for the copy to follow. */
  traces: string;
  schedules: string;
  log: (line: string) => void;
  /** Only the mutants whose names start with this (all by default). */
  only?: string;
}): Promise<MutantResult[]> {
  const results: MutantResult[] = [];
  for (const mutant of MUTANTS.filter((m) => !options.only || m.name.startsWith(options.only))) {
    const started = performance.now();
    const dir = await mutatedCopy(mutant);
    try {
      const { code, output } = await runIn(
        dir,
        {
          ...options.env,
          RACE_BAIL: '1',
          RACE_TRACES: options.traces,
          RACE_SCHEDULES: options.schedules,
          RACE_REFUND_SCHEDULES: options.schedules,
        },
        mutant.files ?? RACE_FILES,
      );
      // Caught means a finding of the explorer (a violation, or a divergence from the model), not a copy that
      // failed to load or run.
      const by = code !== 0 ? firstFailure(output) : undefined;
      const found = /"violations"|\[races\] DIVERGED|\[races\] seed /.test(output);
      const result: MutantResult = {
        mutant,
        caught: by !== undefined && found,
        by,
        seconds: (performance.now() - started) / 1000,
      };
      if (code !== 0 && !result.caught) options.log(output.split('\n').slice(-40).join('\n'));
      results.push(result);
      options.log(
        `[mutants] ${mutant.name}: ${result.caught ? `caught in ${result.seconds.toFixed(0)} s by ${result.by ?? 'the explorer'}` : `NOT CAUGHT (${mutant.breaks})`}`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return results;
}
