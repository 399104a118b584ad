// Prisma CLI configuration (plain ESM so no tsconfig or linter has to know about it). The generate script sets PRISMA_SCHEMA_ENGINE_BINARY so that
// `generate` works offline; production keeps the real engine for `prisma migrate deploy`.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/svc_account_admin',
  },
});
