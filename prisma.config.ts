import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PrismaLibSQL } from '@prisma/adapter-libsql';

// The JS schema engine needs no download, which is what makes migrations work offline.
export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => new PrismaLibSQL({ url: process.env.DATABASE_URL ?? 'file:./data/village.db' }),
  schema: path.join('prisma', 'schema.prisma'),
  migrations: { path: path.join('prisma', 'migrations') },
});
