import { parse as parseCookie } from 'cookie';
import type { Namespace, Server, Socket } from 'socket.io';
import {
  AttachSchema,
  DetachSchema,
  UiInputSchema,
  UiResizeSchema,
  UiTerminalAckSchema,
  type UiClientToServerEvents,
  type UiServerToClientEvents,
  type WireEvent,
} from '../../protocol';
import type { Services } from '../services';
import { SESSION_COOKIE, type Principal } from '../services/auth';
import type { Broadcaster } from '../services/ports';
import { handle } from './handler';

interface UiSocketData {
  principal: Principal;
}
type UiSocket = Socket<UiClientToServerEvents, UiServerToClientEvents, Record<string, never>, UiSocketData>;

/**
 * One attached terminal view. While `replaying`, live events are buffered so the replay from the
 * database and the live stream join with no gap and no duplicate.
 */
interface Viewer {
  socket: UiSocket;
  runnerId: string | null;
  replaying: boolean;
  buffer: WireEvent[];
  lastSeq: number;
  ackSeq: number;
}

/** True when the handshake's Origin (if any) is this server: other sites cannot ride the cookie. */
export function sameOrigin(headers: Record<string, string | string[] | undefined>): boolean {
  const origin = headers.origin;
  if (!origin || typeof origin !== 'string') return true; // non-browser clients send none
  try {
    return new URL(origin).host === headers.host;
  } catch {
    return false;
  }
}

/** The /ui namespace: browsers with a login cookie; rooms per org; terminal attach and input. */
export function attachUiNamespace(io: Server, services: Services): Broadcaster {
  const nsp = io.of('/ui') as unknown as Namespace<UiClientToServerEvents, UiServerToClientEvents, Record<string, never>, UiSocketData>;
  const viewers = new Map<string, Map<string, Viewer>>();
  const forwardedAck = new Map<string, number>();

  nsp.use(async (socket, next) => {
    try {
      if (!sameOrigin(socket.handshake.headers)) return next(new Error('FORBIDDEN: cross-origin connection refused'));
      const cookies = parseCookie(socket.handshake.headers.cookie ?? '');
      const principal = await services.auth.principalFromToken(cookies[SESSION_COOKIE]);
      if (!principal) return next(new Error('UNAUTHORIZED: log in first'));
      socket.data.principal = principal;
      next();
    } catch (err) {
      console.error('[server] ui handshake failed', err);
      next(new Error('INTERNAL: handshake failed'));
    }
  });

  function removeViewer(sessionId: string, socketId: string) {
    const set = viewers.get(sessionId);
    const v = set?.get(socketId);
    if (!set || !v) return;
    set.delete(socketId);
    if (set.size === 0) {
      viewers.delete(sessionId);
      forwardedAck.delete(sessionId);
      // The last viewer left: let the runner run on without waiting for acks nobody will send.
      void services.db.session
        .findUnique({ where: { id: sessionId }, select: { lastSeq: true, runnerId: true } })
        .then((s) => s && services.sessions.terminalAck(s.runnerId, sessionId, s.lastSeq))
        .catch((e) => console.error('[server] release flow control', e));
    }
  }

  nsp.on('connection', (socket) => {
    const p = socket.data.principal;
    void socket.join(`org:${p.orgId}`);
    const attached = new Set<string>();

    socket.on(
      'session:attach',
      handle('session:attach', AttachSchema, async ({ session_id, after_seq }) => {
        const session = await services.sessions.get(p, session_id);
        removeViewer(session_id, socket.id);
        const viewer: Viewer = { socket, runnerId: session.runner_id, replaying: true, buffer: [], lastSeq: after_seq, ackSeq: after_seq };
        if (!viewers.has(session_id)) viewers.set(session_id, new Map());
        viewers.get(session_id)!.set(socket.id, viewer);
        attached.add(session_id);
        setImmediate(() => void replay(session_id, viewer));
        return { session };
      }),
    );

    async function replay(sessionId: string, viewer: Viewer) {
      try {
        for await (const page of services.events.replay(sessionId, viewer.lastSeq)) {
          if (viewers.get(sessionId)?.get(socket.id) !== viewer) return; // detached meanwhile
          socket.emit('session:events', { session_id: sessionId, events: page, replay: true });
          viewer.lastSeq = page.at(-1)!.seq;
        }
        const rest = viewer.buffer.filter((e) => e.seq > viewer.lastSeq);
        viewer.buffer = [];
        viewer.replaying = false;
        if (rest.length) {
          socket.emit('session:events', { session_id: sessionId, events: rest, replay: false });
          viewer.lastSeq = rest.at(-1)!.seq;
        }
        socket.emit('session:replayed', { session_id: sessionId, through_seq: viewer.lastSeq });
      } catch (err) {
        console.error('[server] replay failed', err);
        socket.disconnect(true);
      }
    }

    socket.on(
      'session:detach',
      handle('session:detach', DetachSchema, ({ session_id }) => {
        attached.delete(session_id);
        removeViewer(session_id, socket.id);
        return null;
      }),
    );

    socket.on(
      'terminal:input',
      handle('terminal:input', UiInputSchema, async ({ session_id, data }) => {
        await services.sessions.input(p, session_id, data);
        return null;
      }),
    );

    socket.on(
      'terminal:resize',
      handle('terminal:resize', UiResizeSchema, async ({ session_id, cols, rows }) => {
        await services.sessions.resize(p, session_id, cols, rows);
        return null;
      }),
    );

    socket.on(
      'terminal:ack',
      handle('terminal:ack', UiTerminalAckSchema, ({ session_id, seq }) => {
        const viewer = viewers.get(session_id)?.get(socket.id);
        if (!viewer || viewer.replaying) return null; // acks during replay are not flow control
        viewer.ackSeq = Math.min(Math.max(viewer.ackSeq, seq), viewer.lastSeq);
        // The fastest viewer drives the PTY; a slower one catches up from the stream it is sent.
        if (viewer.ackSeq > (forwardedAck.get(session_id) ?? 0)) {
          forwardedAck.set(session_id, viewer.ackSeq);
          void services.sessions.terminalAck(viewer.runnerId, session_id, viewer.ackSeq);
        }
        return null;
      }),
    );

    socket.on('disconnect', () => {
      for (const id of attached) removeViewer(id, socket.id);
    });
  });

  return {
    sessionUpdated: (orgId, session) => nsp.to(`org:${orgId}`).emit('session:updated', session),
    repoUpdated: (orgId, repo) => nsp.to(`org:${orgId}`).emit('repo:updated', repo),
    runnerUpdated: (orgId, runner) => nsp.to(`org:${orgId}`).emit('runner:updated', runner),
    hasViewers: (sessionId) => (viewers.get(sessionId)?.size ?? 0) > 0,
    sessionEvents(sessionId, events) {
      for (const v of viewers.get(sessionId)?.values() ?? []) {
        if (v.replaying) {
          v.buffer.push(...events);
          continue;
        }
        const fresh = events.filter((e) => e.seq > v.lastSeq);
        if (!fresh.length) continue;
        v.socket.emit('session:events', { session_id: sessionId, events: fresh, replay: false });
        v.lastSeq = fresh.at(-1)!.seq;
      }
    },
  };
}
