// The system programs the project needs and npm cannot provide: the Redis server (demo and tests), nginx
// (the cluster's gateway) and Chromium (tests). Where they are missing on Debian/Ubuntu as root, install them with apt-get,
// saying so; elsewhere stop with one line naming the install command.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';

export type SystemProgram = {
  name: string;
  /** Paths to try, then the PATH. */
  candidates: string[];
  apt: string;
  brew: string;
  image: string;
};

export const REDIS_SERVER: SystemProgram = {
  name: 'redis-server',
  candidates: ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/opt/homebrew/bin/redis-server'],
  apt: 'redis-server',
  brew: 'redis',
  image: 'redis:7',
};

/** The gateway of `npm run demo:cluster` (and of the tests' cluster). */
export const NGINX: SystemProgram = {
  name: 'nginx',
  candidates: ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/bin/nginx', '/opt/homebrew/bin/nginx'],
  apt: 'nginx',
  brew: 'nginx',
  image: 'nginx:stable',
};

/**
 * The tests' browser: Chromium's headless shell (Debian's chromium-headless-shell, what Playwright itself runs
 * headless), which does the same work as the full browser in about 40% of its CPU; the full Chromium where the
 * shell cannot be installed.
 */
export const CHROMIUM_HEADLESS_SHELL: SystemProgram = {
  name: 'chromium-headless-shell',
  candidates: ['/usr/bin/chromium-headless-shell'],
  apt: 'chromium-headless-shell',
  brew: '--cask chromium',
  image: 'mcr.microsoft.com/playwright',
};

export const CHROMIUM: SystemProgram = {
  name: 'chromium',
  candidates: ['/usr/bin/chromium', '/usr/bin/chromium-browser'],
  apt: 'chromium',
  brew: '--cask chromium',
  image: 'mcr.microsoft.com/playwright',
};

/** The workshop guide's commands use curl; its tests run them as printed (e2e/guide.ts). */
export const CURL: SystemProgram = {
  name: 'curl',
  candidates: ['/usr/bin/curl', '/usr/local/bin/curl', '/opt/homebrew/bin/curl'],
  apt: 'curl',
  brew: 'curl',
  image: 'curlimages/curl',
};

export class MissingProgramError extends Error {}

function find(program: SystemProgram): string | undefined {
  const onDisk = program.candidates.find((candidate) => existsSync(candidate));
  if (onDisk) return onDisk;
  const which = spawnSync('sh', ['-c', `command -v ${program.name}`], { encoding: 'utf8' });
  const found = which.stdout.trim();
  return which.status === 0 && found ? found : undefined;
}

/** The first program's path (installed where it can be), else the second's. */
export function ensureEither(preferred: SystemProgram, fallback: SystemProgram, log: (line: string) => void): string {
  try {
    return ensureProgram(preferred, log);
  } catch (error) {
    if (!(error instanceof MissingProgramError)) throw error;
    return ensureProgram(fallback, log);
  }
}

/** The program's path, installing it with apt-get where that can be done without asking. */
export function ensureProgram(program: SystemProgram, log: (line: string) => void): string {
  const found = find(program);
  if (found) return found;
  const canApt = process.platform === 'linux' && userInfo().uid === 0 && existsSync('/usr/bin/apt-get');
  if (canApt) {
    log(`${program.name} is missing: installing the Debian package "${program.apt}" with apt-get (once)...`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () =>
      execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', program.apt], {
        stdio: 'ignore',
        env,
      });
    try {
      install();
    } catch {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
      install();
    }
    const installed = find(program);
    if (installed) return installed;
  }
  throw new MissingProgramError(
    `${program.name} is required but not installed. Install it with: sudo apt-get install -y ${program.apt} ` +
      `(Debian/Ubuntu), brew install ${program.brew} (macOS), or run the official container image ${program.image}.`,
  );
}
