// `npm run demo`: the app on http://localhost:3000 (PORT), its worker, and the services they need.
// See scripts/lib/launcher.ts for the steps.
import { env, InvalidEnvError } from '../lib/env.ts';
import { launch } from './lib/launcher.ts';
import { inOwnProcessGroup } from './lib/own-process-group.ts';
import { MissingProgramError } from './lib/system-programs.ts';

async function main(): Promise<void> {
  const { PORT, INSTANCE_NAME } = env();
  await launch({ apps: [{ name: INSTANCE_NAME ?? `app-${PORT}`, port: PORT }] });
}

// In a process group of its own, so that Ctrl-C reaches the launcher, which stops the rest in order.
inOwnProcessGroup(() =>
  main().catch((error: unknown) => {
    const known = error instanceof InvalidEnvError || error instanceof MissingProgramError;
    console.error(`[demo] ${known || error instanceof Error ? (error as Error).message : String(error)}`);
    process.exit(1);
  }),
);
