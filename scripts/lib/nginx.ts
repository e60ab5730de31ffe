// Runs the cluster's nginx: its own prefix under the data folder, in the foreground (the launcher supervises
// it like the apps), its configuration written from the lab's gateway settings and reloaded with
// `nginx -s reload` when they change, and its access log read as it grows.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { GatewaySettings } from '../../lib/lab/settings.ts';
import { type NginxPlan, renderNginxConfig } from './nginx-config.ts';
import { type AccessLogEntry, parseAccessLogLine } from './nginx-log.ts';

const run = promisify(execFile);

export type Nginx = {
  /** The configuration file nginx runs with (a stable path: the lab shows it). */
  file: string;
  /** The text of that file. */
  config(): string;
  /** Starts nginx in the foreground (for the supervisor: it starts it again if it dies). */
  spawn(): ChildProcess;
  /**
   * Writes the configuration for these settings, checks it (`nginx -t`) and reloads (`nginx -s reload`);
   * resolves once the workers that ran the old one are gone (they finish their requests first, up to 5 s).
   */
  apply(settings: GatewaySettings): Promise<void>;
  /** Calls `onEntry` with each request nginx logs from now on; returns a function that stops reading. */
  follow(onEntry: (entry: AccessLogEntry) => void): () => void;
};

/** The master's worker processes (Linux: /proc); undefined where that cannot be read. */
function workersOf(master: number): number[] | undefined {
  try {
    return readFileSync(`/proc/${master}/task/${master}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return undefined;
  }
}

export function nginxAt(binary: string, plan: Omit<NginxPlan, 'settings'>, settings: GatewaySettings): Nginx {
  const { prefix } = plan;
  const file = path.join(prefix, 'nginx.conf');
  const accessLog = path.join(prefix, 'access.log');
  for (const dir of ['tmp', 'tmp/body', 'tmp/proxy', 'tmp/fastcgi', 'tmp/uwsgi', 'tmp/scgi']) {
    mkdirSync(path.join(prefix, dir), { recursive: true });
  }
  // `-e`: errors before the configuration is read go to the prefix too, not to /var/log (which may not be writable).
  const args = (...more: string[]) => ['-p', `${prefix}/`, '-c', file, '-e', path.join(prefix, 'error.log'), ...more];
  writeFileSync(file, renderNginxConfig({ ...plan, settings }));
  writeFileSync(accessLog, '', { flag: 'a' });

  const nginx = async (...more: string[]) => {
    try {
      await run(binary, args(...more));
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr?.trim() ?? '';
      throw new Error(`nginx ${more.join(' ')} failed: ${stderr.split('\n').pop() ?? String(error)}`);
    }
  };

  return {
    file,
    config: () => readFileSync(file, 'utf8'),
    spawn: () => spawn(binary, args(), { stdio: ['ignore', 'ignore', 'inherit'] }),
    apply: async (next) => {
      // Checked before it replaces the running one: a configuration nginx refuses never reaches it.
      const candidate = `${file}.next`;
      writeFileSync(candidate, renderNginxConfig({ ...plan, settings: next }));
      try {
        await run(binary, ['-p', `${prefix}/`, '-c', candidate, '-e', path.join(prefix, 'error.log'), '-t', '-q']);
      } catch (error) {
        throw new Error(`nginx refused the new configuration: ${(error as { stderr?: string }).stderr?.trim()}`);
      }
      renameSync(candidate, file);
      const master = Number.parseInt(readFileSync(path.join(prefix, 'nginx.pid'), 'utf8'), 10);
      const before = workersOf(master);
      await nginx('-s', 'reload');
      for (let waited = 0; waited < 5_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const now = workersOf(master);
        if (now === undefined ? waited >= 500 : now.length > 0 && !now.some((pid) => before?.includes(pid))) break;
      }
    },
    follow: (onEntry) => {
      let offset = statSync(accessLog).size;
      let partial = '';
      const read = () => {
        const size = statSync(accessLog, { throwIfNoEntry: false })?.size ?? 0;
        if (size < offset) offset = 0; // truncated
        if (size === offset) return;
        const fd = openSync(accessLog, 'r');
        try {
          const buffer = Buffer.alloc(size - offset);
          readSync(fd, buffer, 0, buffer.length, offset);
          offset = size;
          const lines = (partial + buffer.toString('utf8')).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) {
            const entry = parseAccessLogLine(line);
            if (entry) onEntry(entry);
          }
        } finally {
          closeSync(fd);
        }
      };
      const timer = setInterval(read, 200);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
