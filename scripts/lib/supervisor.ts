// Keeps a child process running: started again when it dies unexpectedly (the lab's crash faults kill
// the app or the worker on purpose), with a pid file so a later launcher can clean up after a SIGKILL.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';

export type Supervised = { current(): ChildProcess; stop(): Promise<void> };

export function supervise(
  name: string,
  start: () => ChildProcess,
  options: { pidFile: string; log: (line: string) => void; onGiveUp: () => void },
): Supervised {
  let child: ChildProcess;
  let stopping = false;
  let deaths: number[] = [];
  const run = () => {
    child = start();
    writeFileSync(options.pidFile, String(child.pid));
    child.once('exit', (code, signal) => {
      if (stopping) return;
      deaths = [...deaths.filter((at) => Date.now() - at < 60_000), Date.now()];
      if (deaths.length > 20) {
        options.log(`${name} keeps dying (${signal ?? `exit ${code}`}); giving up`);
        options.onGiveUp();
        return;
      }
      options.log(`${name} died (${signal ?? `exit ${code}`}); starting it again`);
      setTimeout(() => {
        if (!stopping) run();
      }, 300);
    });
  };
  run();
  return {
    current: () => child,
    stop: async () => {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const forced = setTimeout(() => {
        options.log(`${name} did not stop within 10 s; killing it`);
        child.kill('SIGKILL');
      }, 10_000);
      await exited;
      clearTimeout(forced);
    },
  };
}
