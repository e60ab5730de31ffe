// Prisma's schema engine, run offline. The Prisma 7 CLI downloads a native schema engine, which a
// machine without internet cannot fetch; the same engine ships on npm as WebAssembly
// (@prisma/schema-engine-wasm) and talks to PostgreSQL through the project's own driver adapter.
// `applyMigrations` records `_prisma_migrations` exactly as `prisma migrate deploy` does.
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaEngine, SchemaFilter } from '@prisma/schema-engine-wasm';
import * as bindings from '@prisma/schema-engine-wasm/schema_engine_bg';
import pg from 'pg';
import { ROOT } from './paths.ts';

export const SCHEMA_PATH = path.join(ROOT, 'prisma/schema.prisma');
export const MIGRATIONS_DIR = path.join(ROOT, 'prisma/migrations');
export const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };

let loaded: Promise<void> | undefined;

/** Node 20 cannot `import` a .wasm file, so instantiate the module by hand, as wasm-bindgen expects. */
function loadWasm(): Promise<void> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    const file = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg').replace(/\.js$/, '.wasm');
    const { instance } = await WebAssembly.instantiate(await readFile(file), {
      './schema_engine_bg.js': bindings as unknown as WebAssembly.ModuleImports,
    });
    bindings.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
  })();
  return loaded;
}

/**
 * Runs `work` with the schema engine opened on a database, then closes everything. The engine takes
 * PostgreSQL's migration advisory lock on a session and never lets go (the native engine is a process
 * that exits); ending our own pool is what releases it for the next migrator.
 */
export async function withSchemaEngine<T>(databaseUrl: string, work: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  await loadWasm();
  const schema = await readFile(SCHEMA_PATH, 'utf8');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPg(pool));
  const engine = await bindings.SchemaEngine.new({ datamodels: [[SCHEMA_PATH, schema]] }, () => {}, adapter);
  try {
    return await work(engine);
  } finally {
    engine.free();
    await pool.end();
  }
}

/** The committed migrations, in the shape the engine expects (Prisma's standard folder layout). */
export async function readMigrations(): Promise<MigrationList> {
  const entries = await readdir(MIGRATIONS_DIR, { withFileTypes: true }).catch(() => []);
  const directories = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const lockPath = path.join(MIGRATIONS_DIR, 'migration_lock.toml');
  return {
    baseDir: MIGRATIONS_DIR,
    lockfile: { path: 'migration_lock.toml', content: await readFile(lockPath, 'utf8').catch(() => null) },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      directories.map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: await readFile(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8').then(
            (content) => ({ tag: 'ok' as const, value: content }),
            (error: Error) => ({ tag: 'error' as const, value: error.message }),
          ),
        },
      })),
    ),
  };
}
