// Applying, resetting and creating migrations, offline (see schema-engine.ts for why not the Prisma CLI).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { MIGRATIONS_DIR, NO_FILTER, readMigrations, SCHEMA_PATH, withSchemaEngine } from './schema-engine.ts';

/** Applies every committed migration that the database has not seen yet; returns their names. */
export async function applyMigrations(databaseUrl: string): Promise<string[]> {
  const migrationsList = await readMigrations();
  return withSchemaEngine(databaseUrl, async (engine) => {
    const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList, filters: NO_FILTER });
    return appliedMigrationNames;
  });
}

/**
 * A new, migrated database named `name` on the server of `serverUrl` (replacing one of that name): a test run's
 * own rows, apart from everyone else's. FORCE: an app left running by an interrupted run must not keep it.
 */
export async function freshDatabase(serverUrl: string, name: string): Promise<string> {
  const url = new URL(serverUrl);
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  await applyMigrations(url.toString());
  return url.toString();
}

/** Drops the database of `databaseUrl` (one freshDatabase made) from the server of `serverUrl`. */
export async function dropDatabase(serverUrl: string, databaseUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const name = new URL(databaseUrl).pathname.slice(1);
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Drops everything in the database, then applies every migration (what `prisma migrate reset` does). */
export async function resetDatabase(databaseUrl: string): Promise<string[]> {
  await withSchemaEngine(databaseUrl, (engine) => engine.reset({ filter: NO_FILTER }));
  return applyMigrations(databaseUrl);
}

/**
 * Writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that takes `previousSchema` (the
 * schema.prisma the committed migrations were made from, usually the one at git HEAD) to the current
 * schema.prisma: what `prisma migrate dev --create-only` does. It diffs two schema files rather than
 * replaying the migrations on a shadow database, because the engine's WebAssembly build cannot yet read
 * PostgreSQL 18's catalog through the driver adapter. Returns the new folder, or undefined if nothing changed.
 */
export async function createMigration(
  databaseUrl: string,
  name: string,
  previousSchema: string,
): Promise<string | undefined> {
  const schema = await readFile(SCHEMA_PATH, 'utf8');
  // A diff of two schema files reads no table, but the engine connects when it opens.
  const { stdout } = await withSchemaEngine(databaseUrl, (engine) =>
    engine.diff({
      from: previousSchema
        ? { tag: 'schemaDatamodel', files: [{ path: SCHEMA_PATH, content: previousSchema }] }
        : { tag: 'empty' },
      to: { tag: 'schemaDatamodel', files: [{ path: SCHEMA_PATH, content: schema }] },
      script: true,
      exitCode: null,
      filters: NO_FILTER,
    }),
  );
  if (!stdout || !/\b(CREATE|ALTER|DROP)\b/.test(stdout)) return undefined;
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const folder = path.join(MIGRATIONS_DIR, `${stamp}_${name.replace(/\W+/g, '_').toLowerCase()}`);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, 'migration.sql'), stdout);
  return folder;
}
