// `npm test`: every check, against real services that this script starts and stops itself.
//   types → lint → build → unit + integration (vitest; real PostgreSQL and Redis) → Playwright (Chromium; of the
//   proof matrix, every scenario with every defence on and with none: the single-layer cells are tagged
//   @full-matrix, which `npm run test:e2e` and `npm run scenarios` run too)
// `npm run test:deep` (`--only deep`): what npm test leaves out to stay within its minutes, and CI runs after it:
//   the vitest project `deep` (the launcher with its own servers, the background jobs on 100,000 orders, the race
//   explorer's random schedules and the fuzzing again, with more inputs) beside the project `cluster` on a Redis
//   Cluster, then the browser tests tagged @full-matrix or @deep (e2e/tiers.ts).
// The services use their own ports and a throwaway data folder (.data/test): demo data is never touched.
// `--only <step>` runs one step (with what it needs), e.g. `npm run test:e2e`; `--only scenarios` runs
// the proof matrix alone (`npm run scenarios`), `--only screenshots` refreshes docs/images, `--only races`
// runs the race explorer alone (`npm run races -- --schedules 20000`). Other arguments go to Playwright
// (e.g. `npm run scenarios -- -g "@double-click"`), or with `--only vitest` to Vitest (a file filter). `npm run races` runs the model checker, then the race
// explorer on the real code; `npm run races -- --mutants` then the deliberate bugs it must catch;
// `npm run races -- --mutant <name>` only the mutants whose names start so, on the model's traces of the last run.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { LEFT_TO_DEEP } from '../e2e/tiers.ts';
import { DEEP_ONLY } from '../test/deep-only.ts';
import { playwrightFailures, vitestFailures } from './lib/failures.ts';
import { applyMigrations, freshDatabase } from './lib/migrations.ts';
import { RACE_FILES, runMutants } from './lib/mutants.ts';
import { buildApp, buildIsStale, nextEnv } from './lib/next-app.ts';
import { ROOT } from './lib/paths.ts';
import { type RunningCluster, startRedisCluster } from './lib/redis-cluster.ts';
import { type Services, startServices } from './lib/services.ts';
import {
  CHROMIUM,
  CHROMIUM_HEADLESS_SHELL,
  CURL,
  ensureEither,
  ensureProgram,
  NGINX,
  REDIS_SERVER,
} from './lib/system-programs.ts';

// Below 32768: Linux hands out 32768-60999 as the local ports of outgoing connections, and a port one of
// them holds at that moment cannot be listened on (the hostile tests start and stop servers mid-run).
// TEST_PORT_OFFSET shifts every port the tests use (services, apps, the cluster, the hostile tests' own), so
// two checkouts can run their suites side by side without meeting.
const PORT_OFFSET = Number(process.env.TEST_PORT_OFFSET ?? 0);
const TEST_PORTS = { postgres: 25433 + PORT_OFFSET, redis: 26380 + PORT_OFFSET, app: 3100 + PORT_OFFSET };
/** The Redis Cluster's three primaries (26490-26492) and their buses (26493-26495). */
const CLUSTER_FIRST_PORT = 26490 + PORT_OFFSET;
const STEPS = ['types', 'lint', 'build', 'vitest', 'e2e', 'deep', 'scenarios', 'screenshots', 'races'] as const;
type Step = (typeof STEPS)[number];
const DEFAULT_STEPS: Step[] = ['types', 'lint', 'build', 'vitest', 'e2e'];
const BROWSER_STEPS: Step[] = ['e2e', 'deep', 'scenarios', 'screenshots'];

const log = (line: string) => console.log(`\n[test] ${line}`);

/**
 * Runs a command to its end. Asynchronously: this process must keep reading the embedded PostgreSQL's
 * output meanwhile, or the server blocks writing its log (a blocked event loop once stalled every
 * backend that logged an error, such as layer 4's unique violations).
 */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: 'inherit' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
}

const npx = (bin: string) => path.join(ROOT, 'node_modules/.bin', bin);

async function main(): Promise<number> {
  const onlyIndex = process.argv.indexOf('--only');
  const only = onlyIndex > 0 ? (process.argv[onlyIndex + 1] as Step | undefined) : undefined;
  if (only && !STEPS.includes(only)) throw new Error(`--only takes one of: ${STEPS.join(', ')}`);
  const wanted = (step: Step) =>
    only
      ? only === step || (step === 'build' && !['types', 'lint', 'races'].includes(only))
      : DEFAULT_STEPS.includes(step);
  // `--schedules N`: how many random schedules the race explorer runs (npm test runs a bounded number);
  // `--mutants`: then the deliberate bugs of test/races/mutants.ts, each of which it must catch.
  const schedulesIndex = process.argv.indexOf('--schedules');
  const schedules = schedulesIndex > 0 ? process.argv[schedulesIndex + 1] : undefined;
  if (schedules !== undefined && !/^\d+$/.test(schedules)) throw new Error('--schedules takes a number');
  // `--mutant <name>`: only the mutants whose names start so, without the model and the explorer before them (a
  // mutant's own run follows the model's traces of the last `npm run races`, if they are there).
  const mutantIndex = process.argv.indexOf('--mutant');
  const onlyMutant = mutantIndex > 0 ? process.argv[mutantIndex + 1] : undefined;
  if (mutantIndex > 0 && !onlyMutant) throw new Error('--mutant takes the start of a mutant’s name');
  const mutants = process.argv.includes('--mutants') || onlyMutant !== undefined;
  // Everything else on the command line goes to Playwright (npm passes what follows its own `--`).
  const passThrough = process.argv
    .slice(2)
    .filter(
      (arg, i, all) =>
        !['--', '--only', '--schedules', '--mutants', '--mutant'].includes(arg) &&
        all[i - 1] !== '--only' &&
        all[i - 1] !== '--schedules' &&
        all[i - 1] !== '--mutant',
    );
  const needsBrowser = BROWSER_STEPS.some(wanted);
  // `--only vitest <file filters>`: the filters go to Vitest instead (`npm test -- --only vitest lib/payments`).
  const vitestFilter = only === 'vitest' && passThrough.length > 0 ? ['--passWithNoTests', ...passThrough] : [];
  // Those filters also name the deep run's own files (the launcher's, say), run then in the deep project by path.
  const deepOnlyNamed = only === 'vitest' ? DEEP_ONLY.filter((file) => passThrough.some((f) => file.includes(f))) : [];

  const results: Array<{ step: string; ok: boolean; seconds: number }> = [];
  // Each vitest run also writes a JSON report, and Playwright its own (playwright.config.ts): the summary
  // names every failed test from them.
  const reports = {
    main: '.data/vitest-main.json',
    cluster: '.data/vitest-cluster.json',
    deep: '.data/vitest-deep.json',
  };
  const playwrightReport = path.join(ROOT, 'e2e/.results/report.json');
  await Promise.all(
    [...Object.values(reports), playwrightReport].map((file) => rm(path.resolve(ROOT, file), { force: true })),
  );
  const vitestJson = (run: keyof typeof reports) => [
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${reports[run]}`,
  ];
  const timed = async (step: string, work: () => boolean | Promise<boolean>) => {
    log(`${step}...`);
    const started = Date.now();
    let ok = false;
    try {
      ok = await work();
    } catch (error) {
      console.error(error instanceof Error ? error.message : error);
    }
    results.push({ step, ok, seconds: (Date.now() - started) / 1000 });
    return ok;
  };

  const chromiumPath = needsBrowser ? ensureEither(CHROMIUM_HEADLESS_SHELL, CHROMIUM, log) : '';
  if (needsBrowser) ensureProgram(CURL, log);
  ensureProgram(REDIS_SERVER, log);
  // The cluster's gateway: its own integration test, and the cluster the scenarios run through.
  if (wanted('vitest') || needsBrowser) ensureProgram(NGINX, log);

  // Types and lint only read the sources: they run beside the unit and integration tests, which mostly wait
  // on servers (not beside the build, which empties .next while tsc would read its generated types).
  const checks = () =>
    Promise.all([
      wanted('types')
        ? timed('types (tsc)', async () => (await run(npx('next'), ['typegen'])) && run(npx('tsc'), ['--noEmit']))
        : true,
      wanted('lint') ? timed('lint (biome)', () => run(npx('biome'), ['check', '.'])) : true,
    ]);

  let services: Services | undefined;
  let cluster: RunningCluster | undefined;
  /** What the cluster run of the vitest step uses: the cluster, and a database of its own. */
  let clusterRun: { redisUrl: string; databaseUrl: string } | undefined;
  const stop = async () => {
    await Promise.all([cluster?.stop(), services?.stop()]);
    cluster = undefined;
    services = undefined;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => void stop().then(() => process.exit(130)));
  }
  try {
    if (wanted('vitest') || wanted('races') || needsBrowser) {
      const dataDir = path.join(ROOT, '.data/test');
      await rm(dataDir, { recursive: true, force: true });
      // The Redis Cluster of the vitest step starts beside the services (its data outside .data/test, so that
      // the pid files of a run killed with SIGKILL are still there to stop its nodes). Each is kept for stop()
      // as soon as it runs, whichever fails.
      const started = await Promise.allSettled([
        startServices({
          profile: 'test',
          dataDir: '.data',
          postgresPort: TEST_PORTS.postgres,
          redisPort: TEST_PORTS.redis,
          log,
        }).then((running) => {
          services = running;
        }),
        wanted('deep')
          ? startRedisCluster({
              binary: ensureProgram(REDIS_SERVER, log),
              firstPort: CLUSTER_FIRST_PORT,
              dataDir: path.join(ROOT, '.data/test-cluster'),
              log,
            }).then((running) => {
              cluster = running;
            })
          : undefined,
      ]);
      for (const result of started) if (result.status === 'rejected') throw result.reason;
      if (!services) throw new Error('the services did not start');
      const [, clusterDatabaseUrl] = await Promise.all([
        applyMigrations(services.databaseUrl),
        cluster ? freshDatabase(services.databaseUrl, 'payonce_test_cluster') : undefined,
      ]);
      clusterRun =
        cluster && clusterDatabaseUrl ? { redisUrl: cluster.url, databaseUrl: clusterDatabaseUrl } : undefined;
      log(`services: ${[...services.started, ...(cluster ? [`a Redis Cluster on ${cluster.url}`] : [])].join(', ')}`);
    }
    const env = nextEnv({
      NODE_ENV: 'test',
      // The suites run hundreds of orders and payments a minute from one caller: the limits are off, and a
      // hostile test checks them; so is the retention job, whose own test gives it old rows.
      RATE_LIMIT_ORDERS_PER_MINUTE: '0',
      RATE_LIMIT_PAYMENTS_PER_MINUTE: '0',
      RETENTION_DAYS: '0',
      DATABASE_URL: services?.databaseUrl ?? '',
      REDIS_URL: services?.redisUrl ?? '',
      CHROMIUM_PATH: chromiumPath,
      E2E_PORT: String(TEST_PORTS.app),
      CLUSTER_PORT: String(3110 + PORT_OFFSET),
      TEST_EMBEDDED_POSTGRES_PORT: String(TEST_PORTS.postgres + 10),
      TEST_EMBEDDED_REDIS_PORT: String(TEST_PORTS.redis + 10),
      // One per run, shared by every app the tests start (the cluster's two instances must agree on it).
      SESSION_SECRET: process.env.SESSION_SECRET ?? randomBytes(32).toString('base64url'),
    });
    if (wanted('build')) {
      await timed('build (next build)', () => {
        if (buildIsStale()) buildApp({ ...env, NODE_ENV: 'production' });
        return true;
      });
    }
    // The deep run's two vitest runs side by side: their files mostly wait on servers. The cluster's has one worker
    // (--no-file-parallelism): a cluster has database 0 alone, and a test that empties Redis empties it for every file.
    const onCluster = clusterRun;
    await Promise.all([
      checks(),
      wanted('vitest')
        ? timed('unit + integration (vitest)', async () => {
            const main = await run(
              npx('vitest'),
              ['run', '--project', 'unit', '--project', 'integration', ...vitestJson('main'), ...vitestFilter],
              env,
            );
            if (deepOnlyNamed.length === 0) return main;
            return (await run(npx('vitest'), ['run', '--project', 'deep', ...deepOnlyNamed], env)) && main;
          })
        : true,
      wanted('deep')
        ? timed('deep: the launcher, the jobs at scale, more schedules and fuzzing (vitest)', () =>
            // The explorer's random schedules and the fuzzing again, with new seeds (printed): with npm test's, as many
            // as npm test ran before the two were split (600 and 300 schedules, 80 inputs per property).
            run(npx('vitest'), ['run', '--project', 'deep', ...vitestJson('deep')], {
              ...env,
              RACE_SCHEDULES: schedules ?? '540',
              RACE_REFUND_SCHEDULES: schedules ?? '270',
              FUZZ_RUNS: '55',
            }),
          )
        : true,
      wanted('deep') && onCluster
        ? timed('deep: on a Redis Cluster (vitest)', () =>
            run(
              npx('vitest'),
              ['run', '--project', 'cluster', '--no-file-parallelism', ...vitestJson('cluster'), ...vitestFilter],
              {
                ...env,
                REDIS_URL: onCluster.redisUrl,
                DATABASE_URL: onCluster.databaseUrl,
              },
            ),
          )
        : true,
    ]);
    if (wanted('races')) {
      // 1. The model: every interleaving of the bound, per configuration; the traces for the real code to follow.
      // Outside .data/test, which every run empties: `--mutant` follows the last run's traces.
      const traces = path.join(ROOT, '.data/races/model-traces.json');
      const model =
        onlyMutant !== undefined ||
        (await timed('race model: every interleaving of the bound', () =>
          run(process.execPath, ['--import', 'tsx', 'test/races/model/run.ts', '--out', traces], env),
        ));
      // 2. The real code: the regressions, the model's traces, random schedules beyond the bound.
      const randomSchedules = schedules ?? '1500';
      const explorer =
        onlyMutant !== undefined ||
        (await timed('race explorer on the real code (vitest)', () =>
          run(npx('vitest'), ['run', '--project', 'integration', ...RACE_FILES], {
            ...env,
            RACE_SCHEDULES: randomSchedules,
            RACE_TRACES: traces,
          }),
        ));
      // 3. The mutants, each of which the explorer must catch.
      if (mutants && model && explorer) {
        await timed('mutants the explorer must catch', async () => {
          // Alone, a mutant follows the model's traces of the last run if they are there (a sample of them otherwise).
          const followed = onlyMutant === undefined || existsSync(traces) ? traces : '';
          const results = await runMutants({
            env,
            traces: followed,
            schedules: '600',
            log: console.log,
            only: onlyMutant,
          });
          if (results.length === 0) console.log(`[mutants] none is named ${onlyMutant}…`);
          const missed = results.filter((result) => !result.caught);
          console.log(`[mutants] ${results.length - missed.length} of ${results.length} caught`);
          return results.length > 0 && missed.length === 0;
        });
      }
    }
    const playwright = (args: string[]) => run(npx('playwright'), ['test', ...args, ...passThrough], env);
    if (wanted('e2e')) {
      // `npm test` leaves out what `npm run test:deep` runs (e2e/tiers.ts): of the proof matrix, it runs every
      // scenario with every defence on and with none; `npm run test:e2e` runs every test.
      const sample = only === undefined ? ['--grep-invert', LEFT_TO_DEEP] : [];
      const title = only === undefined ? 'end to end, the deep tests left out' : 'end to end, every test';
      await timed(`${title} (Playwright)`, () => playwright(['--project=chromium', ...sample]));
    }
    if (wanted('deep')) {
      await timed('deep: the tests npm test leaves out (Playwright)', () =>
        playwright(['--project=chromium', '--grep', LEFT_TO_DEEP]),
      );
    }
    if (wanted('scenarios')) {
      // With the database-failover rows, which only this command runs (e2e/scenarios/pg-failover.spec.ts).
      await timed('scenario matrix (Playwright)', () =>
        run(npx('playwright'), ['test', '--project=chromium', 'e2e/scenarios', ...passThrough], {
          ...env,
          DATABASE_FAILOVER_SCENARIOS: '1',
        }),
      );
    }
    if (wanted('screenshots')) {
      await timed('docs screenshots (Playwright)', () => playwright(['--project=screenshots']));
    }
  } finally {
    await stop();
  }

  console.log('\n[test] summary');
  for (const { step, ok, seconds } of results) {
    console.log(`  ${ok ? 'pass' : 'FAIL'}  ${step.padEnd(36)} ${seconds.toFixed(1).padStart(6)} s`);
  }
  const failed = [
    ...Object.values(reports).flatMap((file) => vitestFailures(path.resolve(ROOT, file), ROOT)),
    ...playwrightFailures(playwrightReport),
  ];
  if (failed.length > 0) {
    console.log(`\n[test] ${failed.length} failed:`);
    for (const name of failed) console.log(`  ✘ ${name}`);
  }
  return results.every((result) => result.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[test] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
