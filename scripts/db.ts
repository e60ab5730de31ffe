// `npm run db:migrate` | `db:reset` | `db:new-migration -- <name>`, on the database the demo uses:
// DATABASE_URL when set, otherwise the demo's embedded PostgreSQL (started for the command if the
// demo is not running, and stopped again).
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { env, InvalidEnvError } from '../lib/env.ts';
import { applyMigrations, createMigration, resetDatabase } from './lib/migrations.ts';
import { ROOT } from './lib/paths.ts';
import { PostgresInUseError, startEmbeddedPostgres } from './lib/postgres.ts';
import { SCHEMA_PATH } from './lib/schema-engine.ts';

async function withDatabase<T>(work: (databaseUrl: string) => Promise<T>): Promise<T> {
  const config = env();
  if (config.DATABASE_URL) return work(config.DATABASE_URL);
  const postgres = await startEmbeddedPostgres({
    dataDir: path.resolve(ROOT, config.DATA_DIR, 'demo/postgres'),
    port: config.EMBEDDED_POSTGRES_PORT,
    database: 'payonce',
    durable: true,
  }).catch(async (error: unknown) => {
    // The demo is running and owns the server: use it.
    if (!(error instanceof PostgresInUseError)) throw error;
    return {
      url: `postgresql://payonce:payonce@127.0.0.1:${config.EMBEDDED_POSTGRES_PORT}/payonce`,
      stop: async () => {},
    };
  });
  try {
    return await work(postgres.url);
  } finally {
    await postgres.stop();
  }
}

async function main(command: string | undefined, arg: string | undefined): Promise<void> {
  switch (command) {
    case 'migrate': {
      const applied = await withDatabase(applyMigrations);
      console.log(applied.length > 0 ? `Applied: ${applied.join(', ')}` : 'The database is up to date.');
      return;
    }
    case 'reset': {
      const applied = await withDatabase(resetDatabase);
      console.log(`Reset the database and applied: ${applied.join(', ')}`);
      return;
    }
    case 'new-migration': {
      if (!arg) throw new Error('Usage: npm run db:new-migration -- <name>');
      // The schema the committed migrations were made from: schema.prisma at git HEAD.
      let previous = '';
      try {
        previous = execFileSync('git', ['show', 'HEAD:prisma/schema.prisma'], { cwd: ROOT, encoding: 'utf8' });
      } catch {
        previous = '';
      }
      if (previous === (await readFile(SCHEMA_PATH, 'utf8'))) {
        console.log('schema.prisma is the same as at git HEAD: nothing to migrate.');
        return;
      }
      const folder = await withDatabase((url) => createMigration(url, arg, previous));
      console.log(folder ? `Wrote ${folder}/migration.sql: review it, then run npm run db:migrate.` : 'No change.');
      return;
    }
    default:
      throw new Error('Usage: scripts/db.ts migrate | reset | new-migration <name>');
  }
}

main(process.argv[2], process.argv[3]).catch((error: unknown) => {
  console.error(error instanceof InvalidEnvError || error instanceof Error ? error.message : String(error));
  process.exit(1);
});
