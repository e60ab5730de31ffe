// The workshop guide's commands, read from docs/workshop.md as printed, so a test can run them: a guide
// whose command does not do what its text says fails `npm test`. Fenced ```sh blocks tagged `exercise-N`
// are run with bash against the test server ($APP); every other fenced shell line must be one this file
// knows a test for. The `-g` patterns are checked by test/docs/test-selection.test.ts.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const GUIDE_PATH = path.resolve(import.meta.dirname, '../docs/workshop.md');

export type GuideBlock = { tag: string | undefined; code: string; line: number };

/** Every fenced shell block of the guide, with its tag (```sh exercise-7 → "exercise-7"). */
export function guideBlocks(markdown = readFileSync(GUIDE_PATH, 'utf8')): GuideBlock[] {
  const blocks: GuideBlock[] = [];
  for (const match of markdown.matchAll(/^```(?:sh|bash|shell)(?: +([\w-]+))?\n([\s\S]*?)^```$/gm)) {
    const line = markdown.slice(0, match.index).split('\n').length;
    blocks.push({ tag: match[1], code: match[2] ?? '', line });
  }
  return blocks;
}

/** The one block with that tag: a guide that loses or doubles it fails here. */
export function guideBlock(tag: string): GuideBlock {
  const found = guideBlocks().filter((block) => block.tag === tag);
  if (found.length !== 1) throw new Error(`docs/workshop.md has ${found.length} blocks tagged ${tag}, not one`);
  return found[0] as GuideBlock;
}

/**
 * The commands of untagged blocks (setup, not exercises) and the test that covers each: the guide may not
 * print a command nobody runs.
 */
export const SETUP_COMMANDS: Record<string, string> = {
  'npm install && npm run demo': 'scripts/demo.int.test.ts starts the demo as this command does',
  'export APP=http://localhost:3000': 'e2e/workshop-guide.spec.ts: the demo’s address, and the blocks run with APP set',
  'export ME=attendee-$RANDOM$RANDOM':
    'e2e/workshop-guide.spec.ts: the blocks run with ME set to a name of their own, and the lab shows its lanes at ?client=',
};

/**
 * Runs a block with bash, as an attendee would paste it, with APP pointing at `app` and ME the attendee's name
 * (`me`, by default one of this run's own). Resolves with its output.
 */
export function runGuideBlock(
  block: GuideBlock,
  app: string,
  timeoutMs = 60_000,
  me = `attendee-${process.pid}-${Date.now().toString(36)}`,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      ['-euo', 'pipefail', '-c', block.code],
      { env: { ...process.env, APP: app, ME: me }, timeout: timeoutMs, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`the guide's block at line ${block.line} failed: ${error.message}\n${stdout}${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** The output of each call of the block's function, split where one call's "N charge(s)" line ends it. */
export function runsOf(output: string): string[] {
  return output
    .split(/(?<=charge\(s\)\n)/)
    .map((run) => run.trim())
    .filter(Boolean);
}
