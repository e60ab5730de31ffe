// Ctrl-C in a terminal signals every process of the foreground job at once: the launcher, and also the PostgreSQL,
// Redis, apps and workers it started. The databases then stopped under the apps, which printed a dozen lost
// connections for a clean stop. So `npm run demo` and `npm run demo:cluster` run their launcher in a process group
// of its own, below a front process that stays in the terminal's: the front passes each signal on, and the launcher
// stops the rest in order (nginx, the apps and workers, then the databases).
//
// Until the launcher says it handles the signals itself (`signalsHandled()`, once it has started everything), the
// front passes them to its whole group, as the terminal did: a Ctrl-C while the build runs or the databases start
// stops them too, instead of leaving what was still being started running without its launcher. The launcher stops everything too when the front is gone (killed,
// say, with SIGKILL): the channel between them closes.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

const IN_OWN_GROUP = 'PAYONCE_LAUNCHER_IN_OWN_GROUP';
const SIGNALS_HANDLED = 'signals-handled';
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

let handled = false;

/** Runs `launcher` in a process group of its own, below a front process in the terminal's (see above). */
export function inOwnProcessGroup(launcher: () => void): void {
  if (process.env[IN_OWN_GROUP] === '1' && process.send) {
    delete process.env[IN_OWN_GROUP]; // not inherited by what the launcher starts
    process.channel?.unref();
    process.once('disconnect', () => process.kill(handled ? process.pid : -process.pid, 'SIGTERM'));
    launcher();
    return;
  }
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    detached: true, // setsid(): a session, and so a process group, of its own
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [IN_OWN_GROUP]: '1' },
  });
  let launcherHandles = false;
  child.on('message', (message) => {
    if (message === SIGNALS_HANDLED) launcherHandles = true;
  });
  for (const signal of SIGNALS) {
    process.on(signal, () => {
      try {
        process.kill(launcherHandles ? (child.pid ?? 0) : -(child.pid ?? 0), signal);
      } catch {} // already gone: its exit ends this process too
    });
  }
  child.on('error', (error) => {
    console.error(`could not start the launcher: ${error.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
}

/** Said by the launcher once everything is started: from then on the front signals it alone. */
export function signalsHandled(): void {
  handled = true;
  process.send?.(SIGNALS_HANDLED);
}
