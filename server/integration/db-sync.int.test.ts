import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './harness';
import { POSTGRES_BIN } from './postgres-server';

/**
 * The PostgreSQL copy of the schema (prisma/postgres/) is generated from prisma/schema.prisma by
 * scripts/db-sync.mjs; `--check` is what CI runs. On a copy of prisma/: a new SQLite migration
 * makes the check fail, a sync carries it over (schema and data statements), and then the
 * check passes and a second sync changes nothing.
 */
const dbSync = (...args: string[]) => {
  const res = spawnSync(process.execPath, [join(ROOT, 'scripts/db-sync.mjs'), ...args], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test' } });
  return { code: res.status, out: `${res.stdout}${res.stderr}` };
};

describe('db:sync / db:check: one schema source for SQLite and PostgreSQL', () => {
  let copy: string;

  beforeAll(() => {
    mkdirSync(join(ROOT, '.reports'), { recursive: true });
    // Inside the project, so the copy's prisma.config.ts resolves this project's node_modules.
    copy = mkdtempSync(join(ROOT, '.reports', 'db-sync-'));
    cpSync(join(ROOT, 'prisma'), join(copy, 'prisma'), { recursive: true });
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('the committed copy is in step (what CI checks)', () => {
    const res = dbSync('--check');
    expect(res.out).toContain('in step');
    expect(res.code).toBe(0);
  });

  it.skipIf(!POSTGRES_BIN)('a new SQLite migration is drift until db:sync carries it over; then sync is a no-op', () => {
    appendFileSync(join(copy, 'prisma/schema.prisma'), '\nmodel DriftProbe {\n  id    String @id\n  label String @default("x")\n}\n');
    mkdirSync(join(copy, 'prisma/migrations/099_drift_probe'));
    writeFileSync(
      join(copy, 'prisma/migrations/099_drift_probe/migration.sql'),
      'CREATE TABLE "DriftProbe" ("id" TEXT NOT NULL PRIMARY KEY, "label" TEXT NOT NULL DEFAULT \'x\');\n\n' +
        '-- Portable data statements (copied into the PostgreSQL migration by scripts/db-sync.mjs)\n' +
        'INSERT INTO "DriftProbe" ("id") VALUES (\'seed\');\n',
    );
    const drift = dbSync('--check', '--root', copy);
    expect(drift.code).toBe(1);
    expect(drift.out).toContain('prisma/postgres/schema.prisma differs');
    expect(drift.out).toContain('099_drift_probe');

    const before = readdirSync(join(copy, 'prisma/postgres/migrations'));
    const sync = dbSync('--root', copy);
    expect(sync.code, sync.out).toBe(0);
    const added = readdirSync(join(copy, 'prisma/postgres/migrations')).filter((m) => !before.includes(m));
    expect(added).toEqual(['099_sync']);
    const sql = readFileSync(join(copy, 'prisma/postgres/migrations/099_sync/migration.sql'), 'utf8');
    expect(sql).toMatch(/-- covers: 099_drift_probe\n/);
    expect(sql).toContain('CREATE TABLE "DriftProbe"');
    expect(sql).toContain('INSERT INTO "DriftProbe" ("id") VALUES (\'seed\');');
    // Earlier Postgres migrations are never rewritten.
    for (const m of before) {
      expect(readFileSync(join(copy, 'prisma/postgres/migrations', m, 'migration.sql'), 'utf8')).toBe(readFileSync(join(ROOT, 'prisma/postgres/migrations', m, 'migration.sql'), 'utf8'));
    }
    expect(readFileSync(join(copy, 'prisma/postgres/schema.prisma'), 'utf8')).toContain('model DriftProbe');
    expect(existsSync(join(copy, 'server/generated/prisma-pg'))).toBe(true);

    expect(dbSync('--check', '--root', copy).code).toBe(0);
    const again = dbSync('--root', copy);
    expect(again.out).toContain('nothing to do');
    expect(readdirSync(join(copy, 'prisma/postgres/migrations'))).toEqual([...before, '099_sync'].sort());
    // A cluster start, a diff and a client generation on a shared 2-core machine: minutes, not seconds.
  }, 300_000);
});
