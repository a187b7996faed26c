import type { Namespace } from 'socket.io';
import { fail, type Result } from '../../protocol';

/**
 * The runners connected to the *other* control-plane nodes, and the way to reach them. With the
 * Socket.IO Redis adapter (server/realtime/cluster-adapter.ts) every node's /runner namespace is
 * one: each runner socket joins the room `runner:<id>`, so a command emitted to that room from
 * any node reaches the runner wherever it is connected, with its ack; presence (online, active
 * sessions, health) travels as server-side events. Without an adapter the other nodes are none
 * and all of this is a no-op.
 */

/** A remote runner is forgotten when its node has not spoken of it for this long (a node that died). */
export const REMOTE_PRESENCE_TTL_MS = 20_000;

export const runnerRoom = (runnerId: string) => `runner:${runnerId}`;

export interface Presence {
  runnerId: string;
  online: boolean;
  active: number;
  lag: number | null;
  rss: number | null;
}

type ClusterEvents = {
  'runner:presence': (p: Presence) => void;
  'runner:drop-token': (tokenId: string) => void;
};

export function createRunnerCluster(nsp: Namespace, clustered: () => boolean, onDropToken: (tokenId: string) => void) {
  const remote = new Map<string, Presence & { at: number }>();
  const fresh = (id: string) => {
    const p = remote.get(id);
    if (p && Date.now() - p.at > REMOTE_PRESENCE_TTL_MS) remote.delete(id);
    return remote.get(id);
  };

  // Inter-node messages come from our own nodes through Redis, not from clients; still, only
  // well-formed ones are applied.
  nsp.on('runner:presence' as never, (p: Presence) => {
    if (!p || typeof p.runnerId !== 'string') return;
    if (p.online) remote.set(p.runnerId, { ...p, at: Date.now() });
    else remote.delete(p.runnerId);
  });
  nsp.on('runner:drop-token' as never, (tokenId: unknown) => {
    if (typeof tokenId === 'string') onDropToken(tokenId);
  });
  /** The last keystroke sent to each remote runner: the next one waits for its answer. */
  const inputTurns = new Map<string, Promise<void>>();
  const emit = <K extends keyof ClusterEvents>(name: K, ...args: Parameters<ClusterEvents[K]>) => {
    // One node (the in-memory adapter) has no other node to tell.
    if (clustered()) nsp.serverSideEmit(name, ...args);
  };

  return {
    /** Tell the other nodes about a runner of ours (at register, every heartbeat, and when it leaves). */
    announce(p: Presence) {
      emit('runner:presence', p);
    },
    dropToken(tokenId: string) {
      emit('runner:drop-token', tokenId);
    },
    remote: fresh,
    /**
     * A command to a runner connected to another node (through the adapter's room broadcast with
     * acks). Keystrokes to one runner go one after another: an adapter need not keep the order of
     * messages sent at once (the Postgres adapter NOTIFYs through a pool), and keys must reach the
     * PTY in the order typed.
     */
    command(runnerId: string, name: string, body: unknown, timeoutMs: number): Promise<Result<unknown>> {
      if (name !== 'session:input') return send(runnerId, name, body, timeoutMs);
      const turn = (inputTurns.get(runnerId) ?? Promise.resolve()).then(() => send(runnerId, name, body, timeoutMs));
      const settled = turn.then(() => undefined);
      inputTurns.set(runnerId, settled);
      void settled.then(() => {
        if (inputTurns.get(runnerId) === settled) inputTurns.delete(runnerId);
      });
      return turn;
    },
    notify(runnerId: string, name: string, body: unknown) {
      if (fresh(runnerId)) nsp.to(runnerRoom(runnerId)).emit(name as never, body as never);
    },
  };

  function send(runnerId: string, name: string, body: unknown, timeoutMs: number): Promise<Result<unknown>> {
    if (!fresh(runnerId)) return Promise.resolve(fail('RUNNER_ERROR', 'The runner is offline.'));
    return new Promise((resolve) => {
      (nsp.to(runnerRoom(runnerId)).timeout(timeoutMs) as unknown as { emit: (...a: unknown[]) => void }).emit(
        name,
        body,
        (err: Error | null, answers: Result<unknown>[]) => {
          const res = answers?.[0];
          if (!res) return resolve(fail('RUNNER_ERROR', err ? 'The runner did not answer in time.' : 'The runner is offline.'));
          if (typeof res !== 'object' || typeof res.ok !== 'boolean') return resolve(fail('RUNNER_ERROR', 'The runner sent a malformed answer.'));
          resolve(res);
        },
      );
    });
  }
}
