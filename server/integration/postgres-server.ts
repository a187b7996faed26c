import { randomBytes } from 'node:crypto';
import pg from 'pg';
// A plain .mjs helper shared with scripts/db-sync.mjs (which needs a live server to diff schemas).
import { PG_BIN, startPostgres as startCluster } from '../../scripts/pg-cluster.mjs';

/** Debian's PostgreSQL binaries, when installed (.ci/run installs them); tests skip, saying so, without. */
export const POSTGRES_BIN: string | null = PG_BIN;

/** A private PostgreSQL cluster on a free port in its own directory, for one test file. */
export async function startPostgres(): Promise<{ url: string; serverUrl: string; stop(): void }> {
  const c = await startCluster();
  return { url: c.url, serverUrl: c.url.replace(/\/[^/]*$/, ''), stop: () => c.stop() };
}

/** A fresh, empty database on a running server (`serverUrl` without a database name). */
export async function createPostgresDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `av_${randomBytes(6).toString('hex')}`;
  const base = serverUrl.replace(/\/+$/, '');
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return {
    url: `${base}/${name}`,
    async drop() {
      const a = new pg.Client({ connectionString: `${base}/postgres` });
      await a.connect();
      try {
        await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}
