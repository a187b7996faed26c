import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PrismaLibSQL } from '@prisma/adapter-libsql';
import type { Client, Config, TransactionMode } from '@libsql/client';
import { PrismaClient } from './generated/prisma/client';
import { PROJECT_ROOT } from './env';
import { connectPostgres, migratePostgres } from './db-postgres';
import { IngestWriterThread, setIngestWriter } from './db-writer-thread';
import { Checkpointer } from './db-checkpointer';

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
 * Log pages past which a commit checkpoints the WAL itself. The checkpoint thread
 * (db-checkpointer.ts) keeps the log far below it; this is the net should that thread stop
 * (SQLite's default, 1,000 pages, put a copy of ~4 MB and two fsyncs inside a flood's commits).
 */
const WAL_AUTOCHECKPOINT_PAGES = 16_384;

/**
 * Per-connection settings (journal_mode=WAL is stored in the file; these are not):
 * - busy_timeout: two control-plane processes on one file wait for each other's writes instead of failing at once;
 * - synchronous=NORMAL: in WAL mode a commit appends to the log without an fsync (only checkpoints
 *   sync), so a crash of the machine may lose the last commits but never corrupts the file. With the
 *   default FULL every commit fsyncs on the event loop: ~115 a second while a shell echoed keys;
 * - wal_autocheckpoint: see WAL_AUTOCHECKPOINT_PAGES.
 */
export const CONNECTION_PRAGMAS = [`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`, 'PRAGMA synchronous = NORMAL', `PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`];

/**
 * @libsql/client hands its connection to every transaction and opens a fresh one for what
 * follows, with SQLite's defaults (no busy timeout, synchronous=FULL). Every new connection gets
 * CONNECTION_PRAGMAS here.
 */
class LibSQLWithPragmas extends PrismaLibSQL {
  override createClient(config: Config): Client {
    const client = super.createClient(config);
    const transaction = client.transaction.bind(client);
    client.transaction = (async (mode?: TransactionMode) => {
      const tx = await transaction(mode);
      for (const pragma of CONNECTION_PRAGMAS) await client.execute(pragma);
      return tx;
    }) as Client['transaction'];
    return client;
  }
}

/**
 * The ingest writer a runner batch's transaction runs in (db-writer-thread.ts: a worker thread
 * with its kept connection), or null on PostgreSQL, which keeps Prisma's transaction. It lives and
 * closes with the client (`$disconnect`).
 */
export { ingestWriter } from './db-writer-thread';

/** SQLite tuned for one writer queue and concurrent readers; or PostgreSQL through the pg adapter. */
export async function connectDb(databaseUrl: string): Promise<Db> {
  if (isPostgresUrl(databaseUrl)) return connectPostgres(databaseUrl);
  const db = new PrismaClient({ adapter: new LibSQLWithPragmas({ url: databaseUrl }) });
  // WAL lets pages read while the event writer commits; the busy timeout absorbs brief lock waits.
  await db.$queryRawUnsafe('PRAGMA journal_mode=WAL');
  for (const pragma of CONNECTION_PRAGMAS) await db.$queryRawUnsafe(pragma);
  const writer = new IngestWriterThread(resolveDbFile(databaseUrl), CONNECTION_PRAGMAS);
  setIngestWriter(db, writer);
  const checkpointer = new Checkpointer(resolveDbFile(databaseUrl), CONNECTION_PRAGMAS);
  const disconnect = db.$disconnect.bind(db);
  db.$disconnect = async () => {
    await checkpointer.close();
    // Waits for the transactions sent (each committed or rolled back) before the connection closes.
    await writer.close();
    await disconnect();
  };
  return db;
}

export function resolveDbFile(databaseUrl: string): string {
  return resolve(databaseUrl.slice('file:'.length));
}
