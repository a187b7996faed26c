import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient as PgPrismaClient } from './generated/prisma-pg/client';
import type { PrismaClient } from './generated/prisma/client';
import { PROJECT_ROOT } from './env';

/**
 * PostgreSQL (DATABASE_URL postgres://): the schema copy and migrations in prisma/postgres/ are
 * generated from prisma/schema.prisma by `npm run db:sync`. Prisma 6's `migrate deploy` cannot read
 * Postgres' catalog through the pg adapter, so the migrations are applied here, each in its own
 * transaction, recorded in a table of their own.
 */

const MIGRATIONS_DIR = resolve(PROJECT_ROOT, 'prisma/postgres/migrations');
/** The applied-list table (not Prisma's _prisma_migrations, whose format is Prisma's own). */
const APPLIED_TABLE = '_av_migrations';
/**
 * Advisory lock key held while migrating: nodes starting together apply each migration once, the
 * later ones wait and then find nothing left to do. (Any fixed 64-bit number; "avmigrat" in hex.)
 */
const MIGRATION_LOCK_KEY = '7661766d69677261';
/** Connections per node: the event writer, page reads and the lease renewals share them. */
const POOL_SIZE = 10;

export async function migratePostgres(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query(`SELECT pg_advisory_lock(x'${MIGRATION_LOCK_KEY}'::bigint)`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${APPLIED_TABLE}" (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ name: string }>(`SELECT name FROM "${APPLIED_TABLE}"`)).rows.map((r) => r.name));
    const names = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    for (const name of names) {
      if (done.has(name)) continue;
      const sql = readFileSync(join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8');
      try {
        await client.query('BEGIN');
        await client.query(sql);
        await client.query(`INSERT INTO "${APPLIED_TABLE}" (name) VALUES ($1)`, [name]);
        await client.query('COMMIT');
        applied.push(name);
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`PostgreSQL migration ${name} failed: ${(err as Error).message}`);
      }
    }
  } finally {
    await client.query(`SELECT pg_advisory_unlock(x'${MIGRATION_LOCK_KEY}'::bigint)`).catch(() => undefined);
    await client.end();
  }
  return applied;
}

/**
 * The Postgres client, typed as the SQLite one: both are generated from the same models
 * (scripts/db-sync.mjs only changes the provider), so the domain code sees one API.
 */
export function connectPostgres(databaseUrl: string): PrismaClient {
  const client = new PgPrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: POOL_SIZE }) });
  return client as unknown as PrismaClient;
}
