import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PrismaLibSQL } from '@prisma/adapter-libsql';
import type { Client, Config, TransactionMode } from '@libsql/client';
import { PrismaClient } from './generated/prisma/client';
import { PROJECT_ROOT } from './env';
import { connectPostgres, migratePostgres } from './db-postgres';

export type Db = PrismaClient;

/** DATABASE_URL names a PostgreSQL server (otherwise it is a SQLite file: URL). */
export const isPostgresUrl = (databaseUrl: string) => /^postgres(ql)?:\/\//.test(databaseUrl);

/** Apply pending migrations: the Prisma CLI for SQLite (JS schema engine: works offline), db-postgres.ts for PostgreSQL. */
export async function migrate(databaseUrl: string): Promise<void> {
  if (isPostgresUrl(databaseUrl)) {
    await migratePostgres(databaseUrl);
    return;
  }
  mkdirSync(dirname(databaseUrl.slice('file:'.length)), { recursive: true });
  const out: Buffer[] = [];
  const child = spawn(process.execPath, [resolve(PROJECT_ROOT, 'scripts/prisma.mjs'), 'migrate', 'deploy'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => out.push(b));
  const code = await new Promise<number | null>((res) => child.on('close', res));
  if (code !== 0) throw new Error(`Database migration failed:\n${Buffer.concat(out).toString()}`);
}

/** How long a statement waits for another connection's write lock before it fails with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * @libsql/client hands its connection to every transaction and opens a fresh one for what
 * follows, and a fresh connection waits 0 ms for a lock. Within one process that never shows (its
 * statements run synchronously), but two control-plane processes on one database file then fail
 * each other's writes at once. Every new connection gets the busy timeout here.
 */
class LibSQLWithBusyTimeout extends PrismaLibSQL {
  override createClient(config: Config): Client {
    const client = super.createClient(config);
    const transaction = client.transaction.bind(client);
    client.transaction = (async (mode?: TransactionMode) => {
      const tx = await transaction(mode);
      await client.execute(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      return tx;
    }) as Client['transaction'];
    return client;
  }
}

/** SQLite tuned for one writer queue and concurrent readers; or PostgreSQL through the pg adapter. */
export async function connectDb(databaseUrl: string): Promise<Db> {
  if (isPostgresUrl(databaseUrl)) return connectPostgres(databaseUrl);
  const db = new PrismaClient({ adapter: new LibSQLWithBusyTimeout({ url: databaseUrl }) });
  // WAL lets pages read while the event writer commits; the busy timeout absorbs brief lock waits.
  await db.$queryRawUnsafe('PRAGMA journal_mode=WAL');
  await db.$queryRawUnsafe(`PRAGMA busy_timeout=${BUSY_TIMEOUT_MS}`);
  await db.$queryRawUnsafe('PRAGMA synchronous=NORMAL');
  return db;
}

export function resolveDbFile(databaseUrl: string): string {
  return resolve(databaseUrl.slice('file:'.length));
}
