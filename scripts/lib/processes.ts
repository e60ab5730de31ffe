// Finding the servers a launcher left behind when it was killed with SIGKILL (Linux: /proc).
import { readFile } from 'node:fs/promises';

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function parentOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  return Number.parseInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '', 10);
}

/**
 * Whether a server process is still owned by one of this project's launchers (demo, test, db, ...).
 * Without /proc (macOS), assume it is: leaving a server alone is safe, killing a live one is not.
 */
export async function ownedByLauncher(pid: number): Promise<boolean> {
  const ppid = await parentOf(pid);
  if (ppid === undefined) return true;
  const parent = await readFile(`/proc/${ppid}/cmdline`, 'utf8').catch(() => '');
  return /scripts\/(demo|test|db|bench|cluster)/.test(parent);
}

/** Stops an orphaned server and waits (up to 10 s) for it to exit. */
export async function stopOrphan(pid: number, signal: NodeJS.Signals): Promise<void> {
  process.kill(pid, signal);
  for (let waited = 0; isAlive(pid) && waited < 10_000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Stops the process named by the first line of `pidFile` if it is still running, matches `pattern`,
 * and no launcher owns it any more (its launcher was killed with SIGKILL).
 */
export async function stopLeftover(
  pidFile: string,
  pattern: RegExp,
  signal: NodeJS.Signals,
): Promise<'none' | 'stopped' | 'owned'> {
  const pid = Number.parseInt((await readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return 'none';
  const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (command && !pattern.test(command.replaceAll('\0', ' '))) return 'none'; // the pid was reused
  if (await ownedByLauncher(pid)) return 'owned';
  await stopOrphan(pid, signal);
  return 'stopped';
}

/**
 * The last lines some processes printed, each line labelled with its process, for a failure message: `collect(label)`
 * is a stream's data handler, `text()` what is kept (the last `limit` characters).
 */
export function outputCollector(limit: number): {
  collect: (label: string) => (chunk: Buffer) => void;
  text: () => string;
} {
  let output = '';
  const collect = (label: string) => (chunk: Buffer) => {
    const lines = chunk
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((line) => `${label} ${line}`);
    output = `${output}${lines.join('\n')}\n`.slice(-limit);
  };
  return { collect, text: () => output };
}
