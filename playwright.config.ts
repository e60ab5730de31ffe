import { randomBytes } from 'node:crypto';
import { defineConfig, devices } from '@playwright/test';

// scripts/test.ts starts PostgreSQL and Redis for the tests, builds the app and passes their URLs.
const port = Number(process.env.E2E_PORT ?? 3100);
const clusterPort = Number(process.env.CLUSTER_PORT ?? 3110);
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell';
// Sessions are signed: the app and the cluster's two instances share one key per run (npm test passes it;
// run alone, Playwright makes one here, before its web servers and workers inherit the environment).
process.env.SESSION_SECRET ??= randomBytes(32).toString('base64url');

export default defineConfig({
  testDir: './e2e',
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  retries: 0,
  // Most cells wait (a slow bank, a stall, a lease): four at a time keep two cores busy (measured: about 11%
  // idle with four, 17% with three, and the suite a fifth shorter), with every wait on an answer, not a clock.
  workers: 4,
  timeout: 60_000,
  // An assertion waits for its state this long (Playwright's 5 s by default): beside a second suite on two cores a
  // payment's outcome, or a lab switch reaching another tab, has taken longer (2026-12-07). Only a failure waits it out.
  expect: { timeout: 15_000 },
  // The JSON report is for npm test, which ends by naming what failed (scripts/lib/failures.ts).
  reporter: [['list'], ['./e2e/matrix-reporter.ts'], ['json', { outputFile: 'e2e/.results/report.json' }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: 'on-first-retry',
    launchOptions: {
      // Debian's Chromium (its headless shell, as npm test finds it), never a downloaded browser.
      executablePath: chromium,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // Two cores run the browser, the app, PostgreSQL and the tests: the browser is most of the CPU. One
        // origin needs no site isolation, nor the features below; measured about 10% off the suite's time.
        '--disable-site-isolation-trials',
        '--disable-features=site-per-process,IsolateOrigins,Translate,OptimizationHints,MediaRouter,PaintHolding',
        '--disable-renderer-backgrounding',
        '--disable-backgrounding-occluded-windows',
        '--disable-extensions',
        '--mute-audio',
        '--disable-breakpad',
        '--disable-hang-monitor',
      ],
    },
  },
  projects: [
    // Every spec keeps to its own orders and its own browser's lab: all in parallel.
    { name: 'chromium', use: { ...devices['Desktop Chrome'] }, testIgnore: [/docs-screenshots/] },
    // `npm run docs:screenshots` only.
    { name: 'screenshots', use: { ...devices['Desktop Chrome'] }, testMatch: /docs-screenshots\.spec\.ts/ },
  ],
  webServer: [
    {
      // The production build, as users run it.
      // Idle connections kept 55 s, as scripts/lib/next-app.ts does (KEEP_ALIVE_MS: why).
      command: `node node_modules/next/dist/bin/next start -H 127.0.0.1 -p ${port} --keepAliveTimeout 55000`,
      url: `http://127.0.0.1:${port}/api/health`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'ignore',
      stderr: 'pipe',
    },
    {
      // The cluster (two instances, a retrying gateway, the receipt worker) for the infrastructure scenarios,
      // with a short lease so that a killed instance's claims expire within a test.
      command: 'node --conditions=react-server --import tsx scripts/cluster.ts',
      url: `http://127.0.0.1:${clusterPort}/api/health`,
      env: { PORT: String(clusterPort), REQUEST_KEY_LEASE_MS: '4000', DATA_DIR: '.data/test' },
      reuseExistingServer: false,
      timeout: 90_000,
      stdout: 'ignore',
      stderr: 'pipe',
      gracefulShutdown: { signal: 'SIGTERM', timeout: 15_000 },
    },
  ],
});
