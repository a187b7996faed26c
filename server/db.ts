import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PrismaLibSQL } from '@prisma/adapter-libsql';
import { PrismaClient } from './generated/prisma/client';
import { PROJECT_ROOT } from './env';

export type Db = PrismaClient;

/** Apply pending migrations with the Prisma CLI (JS schema engine: works offline). */
export async function migrate(databaseUrl: string): Promise<void> {
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

/** SQLite tuned for one writer queue and concurrent readers. */
export async function connectDb(databaseUrl: string): Promise<Db> {
  const db = new PrismaClient({ adapter: new PrismaLibSQL({ url: databaseUrl }) });
  // WAL lets pages read while the event writer commits; the busy timeout absorbs brief lock waits.
  await db.$queryRawUnsafe('PRAGMA journal_mode=WAL');
  await db.$queryRawUnsafe('PRAGMA busy_timeout=5000');
  await db.$queryRawUnsafe('PRAGMA synchronous=NORMAL');
  return db;
}

export function resolveDbFile(databaseUrl: string): string {
  return resolve(databaseUrl.slice('file:'.length));
}
