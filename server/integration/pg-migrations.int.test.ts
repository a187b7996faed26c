import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../db-postgres';
import { ROOT } from './harness';
import { createPostgresDatabase } from './postgres-server';

/**
 * `db:check` compares prisma/postgres/schema.prisma with the SQLite schema and which migrations are
 * covered, but cannot replay migrations (Prisma's offline engine refuses a shadow database). This
 * replays them: the PostgreSQL migrations as a node applies them (migratePostgres), against the
 * schema built in one step from prisma/postgres/schema.prisma. Every table, column, index and
 * constraint must come out the same; a sync that dropped tables (it happened with 024_sync) fails
 * here. Runs in the PostgreSQL pass of `npm test` (AV_TEST_POSTGRES_URL); skipped without it.
 */
const pgBase = process.env.AV_TEST_POSTGRES_URL;
/** The Prisma config db-sync uses for the PostgreSQL schema (the JS engine with the pg adapter). */
const PG_CONFIG = 'prisma/postgres/prisma.config.ts';

/** The schema as PostgreSQL reports it, in a stable order (the migrations' own ledger left out). */
async function describeSchema(url: string): Promise<Record<string, string[]>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const rows = async (sql: string) => (await c.query<{ line: string }>(sql)).rows.map((r) => r.line);
    return {
      columns: await rows(`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS line
        FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_av_migrations' ORDER BY table_name, column_name`),
      indexes: await rows(`SELECT tablename || ' ' || regexp_replace(indexdef, ' ON public\\.', ' ON ') AS line
        FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_av_migrations' ORDER BY tablename, indexname`),
      constraints: await rows(`SELECT rel.relname || ' ' || con.conname || ' ' || pg_get_constraintdef(con.oid) AS line
        FROM pg_constraint con JOIN pg_class rel ON rel.oid = con.conrelid JOIN pg_namespace ns ON ns.oid = rel.relnamespace
        WHERE ns.nspname = 'public' AND rel.relname <> '_av_migrations' ORDER BY rel.relname, con.conname`),
      enums: await rows(`SELECT t.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) AS line
        FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname ORDER BY t.typname`),
    };
  } finally {
    await c.end();
  }
}

describe.skipIf(!pgBase)('PostgreSQL migrations replay to the schema they claim (db:check cannot)', () => {
  const dbs: Array<{ drop(): Promise<void> }> = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop().catch(() => undefined);
  });

  it('prisma/postgres/migrations applied one by one give the same tables, columns, indexes and constraints as prisma/postgres/schema.prisma', { timeout: 120_000 }, async () => {
    const replayed = await createPostgresDatabase(pgBase!);
    const direct = await createPostgresDatabase(pgBase!);
    dbs.push(replayed, direct);

    const applied = await migratePostgres(replayed.url);
    expect(applied.length).toBeGreaterThan(0);

    const diff = spawnSync(process.execPath, [join(ROOT, 'scripts/prisma.mjs'), 'migrate', 'diff', '--from-empty', '--to-schema-datamodel', 'prisma/postgres/schema.prisma', '--script', '--config', PG_CONFIG], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: direct.url },
      encoding: 'utf8',
    });
    expect(diff.status, diff.stderr).toBe(0);
    const c = new pg.Client({ connectionString: direct.url });
    await c.connect();
    try {
      await c.query(diff.stdout);
    } finally {
      await c.end();
    }

    const [got, want] = [await describeSchema(replayed.url), await describeSchema(direct.url)];
    expect(want.columns.length).toBeGreaterThan(50);
    // Differences named line by line (a missing table shows as its missing columns).
    for (const part of Object.keys(want)) {
      const missing = want[part]!.filter((l) => !got[part]!.includes(l));
      const extra = got[part]!.filter((l) => !want[part]!.includes(l));
      expect({ part, missing, extra }).toEqual({ part, missing: [], extra: [] });
    }
  });
});
