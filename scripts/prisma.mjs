// Runs the Prisma CLI with DATABASE_URL set: every prisma command needs it (without it `generate`
// tries to download a query engine), and prisma.config.ts does not load .env files.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
// The PostgreSQL copy of the schema (prisma/postgres/) validates only with a postgres URL, and
// without a valid one Prisma falls back to downloading an engine: give `generate` a placeholder.
const forPostgres = args.some((a) => a.includes('prisma/postgres'));
const url = forPostgres
  ? (/^postgres(ql)?:/.test(process.env.DATABASE_URL ?? '') ? process.env.DATABASE_URL : 'postgresql://placeholder@localhost/placeholder')
  : (process.env.DATABASE_URL ?? `file:${resolve(root, 'data/village.db')}`);
if (url.startsWith('file:')) mkdirSync(dirname(url.slice('file:'.length)), { recursive: true });
const bin = resolve(root, 'node_modules/prisma/build/index.js');
const res = spawnSync(process.execPath, [bin, ...args], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' },
});
process.exit(res.status ?? 1);
