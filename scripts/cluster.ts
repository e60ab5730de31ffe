// `npm run demo:cluster`: two app instances (a on PORT+1, b on PORT+2) sharing PostgreSQL and Redis,
// behind a gateway on PORT that retries a request on the other instance when one times out or dies.
import { env, InvalidEnvError } from '../lib/env.ts';
import { launch } from './lib/launcher.ts';
import { inOwnProcessGroup } from './lib/own-process-group.ts';
import { MissingProgramError } from './lib/system-programs.ts';

async function main(): Promise<void> {
  const { PORT } = env();
  await launch({
    apps: [
      { name: 'a', port: PORT + 1 },
      { name: 'b', port: PORT + 2 },
    ],
    gatewayPort: PORT,
  });
}

// In a process group of its own, so that Ctrl-C reaches the launcher, which stops the rest in order.
inOwnProcessGroup(() =>
  main().catch((error: unknown) => {
    const known = error instanceof InvalidEnvError || error instanceof MissingProgramError;
    console.error(`[cluster] ${known || error instanceof Error ? (error as Error).message : String(error)}`);
    process.exit(1);
  }),
);
