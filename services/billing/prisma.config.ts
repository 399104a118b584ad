// Prisma CLI configuration. The schema engine binary is not set here: the offline
// `generate:prisma` script points it at /bin/false, production keeps the real engine
// for `prisma migrate deploy`.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/svc_billing',
  },
});
