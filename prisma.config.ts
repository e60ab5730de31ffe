// Prisma 7 reads its CLI settings from here. The CLI is only used for `prisma generate`;
// migrations are applied by scripts/db.ts and the launchers (scripts/lib/migrations.ts), offline, through the
// schema engine's WebAssembly build.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
