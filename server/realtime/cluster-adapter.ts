import { createAdapter as createPostgresAdapter } from '@socket.io/postgres-adapter';
import { createAdapter } from '@socket.io/redis-adapter';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Server } from 'socket.io';

/**
 * Several control-plane nodes (issue 18): with REDIS_URL set, the browsers' and the runners'
 * Socket.IO servers each get the Redis adapter (without Redis but on PostgreSQL, the Postgres
 * adapter: LISTEN/NOTIFY on the database every node already shares), so a room broadcast on one node reaches sockets
 * on every node. A browser on node B sees output ingested on node A (the session's room), and
 * commands from B reach a runner on A (its `runner:<id>` room, with acks). Nodes need no sticky
 * sessions: runners speak websocket only, and so do browsers when clustered (see
 * `browserTransports`), so no long-polling request can land on a node that does not know it.
 */

/** Transports browsers may use: websocket only when several nodes sit behind one address. */
export const browserTransports = (clustered: boolean): Array<'polling' | 'websocket'> => (clustered ? ['websocket'] : ['polling', 'websocket']);

export interface ClusterAdapter {
  /** The adapter for one Socket.IO server; `channel` keeps the servers' broadcasts apart. */
  forServer(io: Server, channel: 'ui' | 'runner'): void;
  /**
   * False once closing: inter-node emits stop (an ingest finishing during shutdown must not
   * publish on a closed connection, whose rejection nobody could catch).
   */
  isOpen(): boolean;
  close(): Promise<void>;
}

/**
 * The adapter the deployment allows: Redis when REDIS_URL is set, else PostgreSQL when the
 * database is PostgreSQL, else none (one node: Socket.IO's in-memory adapter).
 */
export function clusterAdapterFor(opts: { redisUrl?: string; databaseUrl: string; prefix: string }): ClusterAdapter | null {
  if (opts.redisUrl) return createClusterAdapter(opts.redisUrl, opts.prefix);
  if (/^postgres(ql)?:\/\//.test(opts.databaseUrl)) return createPostgresClusterAdapter(opts.databaseUrl, opts.prefix);
  return null;
}

export function createClusterAdapter(redisUrl: string, prefix: string): ClusterAdapter {
  const clients: Redis[] = [];
  let open = true;
  const client = () => {
    // Requests queue while Redis reconnects (ioredis' default); a broken connection is logged, not thrown.
    const c = new Redis(redisUrl);
    c.on('error', (err) => console.error(`[server] redis (socket.io adapter): ${err.message}`));
    clients.push(c);
    return c;
  };
  return {
    forServer(io, channel) {
      io.adapter(createAdapter(client(), client(), { key: `${prefix}:sio:${channel}` }));
    },
    isOpen: () => open,
    async close() {
      open = false;
      // quit() answers after the commands already sent (the adapter's last publishes), so none of
      // them is rejected as "Connection is closed" with nobody to catch it.
      await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}

/** Connections of the Postgres adapter's pool: one held for LISTEN, the others publish (NOTIFY). */
const PG_ADAPTER_POOL_SIZE = 4;
/**
 * Where the Postgres adapter keeps payloads over NOTIFY's 8,000-byte limit (a batch of terminal
 * output often is); the adapter reads each once and deletes old rows itself. Postgres-only and
 * owned by the adapter, so it is created here rather than in the Prisma schema both databases share.
 */
const PG_ATTACHMENTS_TABLE = 'socket_io_attachments';

/**
 * The Postgres adapter (`@socket.io/postgres-adapter`): inter-node messages are NOTIFYs on a
 * channel per server and namespace, larger ones go through the attachments table. Slower than
 * Redis, but a deployment with only PostgreSQL needs nothing else to run several nodes.
 */
export function createPostgresClusterAdapter(databaseUrl: string, prefix: string): ClusterAdapter {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: PG_ADAPTER_POOL_SIZE });
  pool.on('error', (err) => console.error(`[server] postgres (socket.io adapter): ${err.message}`));
  const table = pool.query(`CREATE TABLE IF NOT EXISTS ${PG_ATTACHMENTS_TABLE} (id bigserial UNIQUE, created_at timestamptz DEFAULT now(), payload bytea)`).catch((err: Error) => {
    console.error(`[server] creating ${PG_ATTACHMENTS_TABLE} for the socket.io adapter failed: ${err.message}`);
  });
  let open = true;
  return {
    forServer(io, channel) {
      io.adapter(
        createPostgresAdapter(pool, {
          channelPrefix: `${prefix}:sio:${channel}`,
          tableName: PG_ATTACHMENTS_TABLE,
          errorHandler: (err) => {
            if (open) console.error(`[server] postgres (socket.io adapter): ${err.message}`);
          },
        }),
      );
    },
    isOpen: () => open,
    async close() {
      open = false;
      await table;
      await pool.end().catch(() => undefined);
    },
  };
}
