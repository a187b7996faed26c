// A throwaway PostgreSQL cluster on a free port in its own directory: used by `npm run db:sync`
// (Prisma's JS schema engine needs a live server even to diff two schema files) and by the
// integration tests. Debian's binaries; initdb refuses root, so as root it runs as `postgres`.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin', '/usr/bin'];

/** Where initdb and pg_ctl are (null when PostgreSQL is not installed). */
export const PG_BIN = BIN_DIRS.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl'))) ?? null;

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** Runs a PostgreSQL binary, as the `postgres` user when we are root. */
function pgRun(dir, bin, args) {
  const asRoot = process.getuid?.() === 0;
  const cmd = asRoot ? 'su' : join(PG_BIN, bin);
  const argv = asRoot ? ['postgres', '-s', '/bin/sh', '-c', [join(PG_BIN, bin), ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')] : args;
  const res = spawnSync(cmd, argv, { cwd: dir, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${bin} failed (${res.status}): ${res.stderr || res.stdout}`);
}

/**
 * Starts a cluster with trust auth on 127.0.0.1 and creates `database`.
 * @returns {Promise<{ url: string, port: number, stop(): void }>}
 */
export async function startPostgres(database = 'agent_village') {
  if (!PG_BIN) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'av-pg-'));
  if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const port = await freePort();
  pgRun(dir, 'initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  // fsync off: a test cluster never has to survive a power cut, and the disk is shared.
  pgRun(dir, 'pg_ctl', ['-D', join(dir, 'data'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, '-l', join(dir, 'log'), '-w', 'start']);
  const base = `postgres://postgres@127.0.0.1:${port}`;
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  let stopped = false;
  return {
    url: `${base}/${database}`,
    port,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        pgRun(dir, 'pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
