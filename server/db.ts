import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PrismaLibSQL } from '@prisma/adapter-libsql';
import type { Client, Config, Transaction, TransactionMode } from '@libsql/client';
import { PrismaClient } from './generated/prisma/client';
import { PROJECT_ROOT } from './env';
import { connectPostgres, migratePostgres } from './db-postgres';
import { SqliteWriter } from './db-writer';

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
 * Per-connection settings (journal_mode=WAL is stored in the file; these are not):
 * - busy_timeout: two control-plane processes on one file wait for each other's writes instead of failing at once;
 * - synchronous=NORMAL: in WAL mode a commit appends to the log without an fsync (only checkpoints
 *   sync), so a crash of the machine may lose the last commits but never corrupts the file. With the
 *   default FULL every commit fsyncs on the event loop: ~115 a second while a shell echoed keys.
 */
const CONNECTION_PRAGMAS = [`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`, 'PRAGMA synchronous = NORMAL'];

/**
 * The SQLite driver's transaction under a Prisma interactive transaction begun inside
 * `withDriverTransaction` (issue 17): statements with large text (terminal output) run on it
 * directly — the same connection and the same transaction — because Prisma passes every
 * parameter through its JSON protocol and query-compiler wasm (~30 ms of CPU per MB of text,
 * against ~4 ms on the driver). Null on PostgreSQL, or when Prisma began no transaction there.
 */
export interface DriverSlot {
  tx: Transaction | null;
}
const driverSlots = new AsyncLocalStorage<DriverSlot>();

/** Runs `fn` (which begins one Prisma transaction) with a slot the driver's transaction is put in. */
export function withDriverTransaction<T>(fn: (slot: DriverSlot) => Promise<T>): Promise<T> {
  const slot: DriverSlot = { tx: null };
  return driverSlots.run(slot, () => fn(slot));
}

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
      const slot = driverSlots.getStore();
      if (slot && !slot.tx) slot.tx = tx;
      return tx;
    }) as Client['transaction'];
    return client;
  }
}

/** The SQLite ingest writer of each client connectDb opened (none on PostgreSQL). */
const writers = new WeakMap<Db, SqliteWriter>();

/**
 * The kept connection a runner batch's transaction runs on (db-writer.ts), or null on PostgreSQL,
 * which keeps Prisma's transaction. It lives and closes with the client (`$disconnect`).
 */
export function ingestWriter(db: Db): SqliteWriter | null {
  return writers.get(db) ?? null;
}

/** SQLite tuned for one writer queue and concurrent readers; or PostgreSQL through the pg adapter. */
export async function connectDb(databaseUrl: string): Promise<Db> {
  if (isPostgresUrl(databaseUrl)) return connectPostgres(databaseUrl);
  const db = new PrismaClient({ adapter: new LibSQLWithPragmas({ url: databaseUrl }) });
  // WAL lets pages read while the event writer commits; the busy timeout absorbs brief lock waits.
  await db.$queryRawUnsafe('PRAGMA journal_mode=WAL');
  for (const pragma of CONNECTION_PRAGMAS) await db.$queryRawUnsafe(pragma);
  const writer = new SqliteWriter(resolveDbFile(databaseUrl), CONNECTION_PRAGMAS);
  writers.set(db, writer);
  const disconnect = db.$disconnect.bind(db);
  db.$disconnect = async () => {
    // Waits for a transaction under way (committed or rolled back) before the connection closes.
    await writer.idle();
    writer.close();
    await disconnect();
  };
  return db;
}

export function resolveDbFile(databaseUrl: string): string {
  return resolve(databaseUrl.slice('file:'.length));
}
