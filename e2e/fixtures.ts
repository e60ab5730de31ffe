// The custom `test` of every spec: fresh data per test (each test creates its own orders), and direct
// access to the database to check what the card network recorded.
import { test as base, expect } from '@playwright/test';
import pg from 'pg';

type Fixtures = {
  db: pg.Pool;
};

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });

export const test = base.extend<Fixtures>({
  // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature
  db: async ({}, use) => {
    await use(pool);
  },
});

export { expect };
