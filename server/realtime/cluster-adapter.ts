import { createAdapter } from '@socket.io/redis-adapter';
import { Redis } from 'ioredis';
import type { Server } from 'socket.io';

/**
 * Several control-plane nodes (issue 18): with REDIS_URL set, the browsers' and the runners'
 * Socket.IO servers each get the Redis adapter, so a room broadcast on one node reaches sockets
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
