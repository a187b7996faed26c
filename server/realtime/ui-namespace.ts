import { parse as parseCookie } from 'cookie';
import type { Namespace, Server } from 'socket.io';
import {
  AttachSchema,
  DetachSchema,
  SpawnSessionBodySchema,
  UiInputSchema,
  UiResizeSchema,
  UiTerminalAckSchema,
  TERMINAL_STATES,
  type UiClientToServerEvents,
  type UiServerToClientEvents,
} from '../../protocol';
import type { Services } from '../services';
import { SESSION_COOKIE, type Principal } from '../services/auth';
import { AppError } from '../services/errors';
import type { MemberChange } from '../services/member-events';
import type { Broadcaster } from '../services/ports';
import type { OriginPolicy } from '../origin-policy';
import { handle } from './handler';
import { TypingRights } from './typing-rights';
import { LiveViewers, sendLive, type UiSocket, type UiSocketData, type Viewer } from './live-viewers';
import { attachTerminalTimeTravel } from './ui-terminal';
import { keyTrace } from './key-trace';
import { createUiEventLimits, MAX_ATTACHED_PER_SOCKET, UI_LIMIT_MESSAGES, type UiEvent, type UiEventLimits } from './ui-limits';

/**
 * True when the handshake's Origin (if any) is one of this server's origins (PUBLIC_URL or
 * loopback, see origin-policy.ts): other sites cannot ride the cookie. Without a policy (a
 * realtime layer started alone) the Origin must name the Host.
 */
export function sameOrigin(headers: Record<string, string | string[] | undefined>, policy?: OriginPolicy): boolean {
  const origin = headers.origin;
  if (!origin || typeof origin !== 'string') return true; // non-browser clients send none
  if (policy) return policy.originAllowed(origin);
  try {
    return new URL(origin).host === headers.host;
  } catch {
    return false;
  }
}

/** The /ui namespace: browsers with a login cookie; rooms per org; terminal attach and input. */
export function attachUiNamespace(io: Server, services: Services, opts: { originPolicy?: () => OriginPolicy; /** shared across nodes through Redis when clustered (control-plane.ts) */ limits?: UiEventLimits } = {}): Broadcaster {
  const nsp = io.of('/ui') as unknown as Namespace<UiClientToServerEvents, UiServerToClientEvents, Record<string, never>, UiSocketData>;
  const viewers = new LiveViewers(services.sessions);

  nsp.use(async (socket, next) => {
    try {
      if (!sameOrigin(socket.handshake.headers, opts.originPolicy?.())) return next(new Error('FORBIDDEN: cross-origin connection refused'));
      const cookies = parseCookie(socket.handshake.headers.cookie ?? '');
      const token = cookies[SESSION_COOKIE];
      const principal = await services.auth.principalFromToken(token);
      if (!principal || !token) return next(new Error('UNAUTHORIZED: log in first'));
      if (principal.mustChangePassword) return next(new Error('FORBIDDEN: change your one-time password first'));
      socket.data.principal = principal;
      socket.data.token = token;
      next();
    } catch (err) {
      console.error('[server] ui handshake failed', err);
      next(new Error('INTERNAL: handshake failed'));
    }
  });

  /**
   * The principal as it is now, not as it was at the handshake: a demoted member's open socket
   * loses the right with the next event, a removed one (or an ended login) is disconnected.
   */
  async function currentPrincipal(socket: UiSocket): Promise<Principal> {
    const was = socket.data.principal;
    const now = await services.auth.principalFromToken(socket.data.token);
    if (!now || now.orgId !== was.orgId || now.mustChangePassword) {
      socket.disconnect(true);
      throw new AppError('UNAUTHORIZED', 'Your login or membership changed: reload the page.');
    }
    socket.data.principal = now;
    return now;
  }

  // Keys skip the per-key database reads: the right to type is remembered per socket and session.
  const typing = new TypingRights(async (socketId, sessionId) => {
    const socket = nsp.sockets.get(socketId);
    if (!socket) throw new AppError('UNAUTHORIZED', 'Your connection closed: reload the page.');
    const p = await currentPrincipal(socket);
    return { ...(await services.sessions.inputTarget(p, sessionId)), userId: p.userId };
  });

  // Changes of membership reach open sockets at once (rooms and disconnects); roles are re-read per event.
  services.memberEvents.on((change: MemberChange) => {
    // Synchronously, before the change's request is answered: the next key is checked again.
    typing.forgetUser(change.userId);
    void (async () => {
      for (const s of await nsp.in(`user:${change.userId}`).fetchSockets()) {
        const socket = nsp.sockets.get(s.id);
        if (!socket) continue;
        if (change.kind === 'removed' && socket.data.principal.orgId === change.orgId) {
          socket.leave(`org:${change.orgId}`);
          socket.disconnect(true);
          continue;
        }
        await currentPrincipal(socket).catch(() => undefined);
      }
    })().catch((e) => console.error('[server] applying a membership change to sockets', e));
  });

  const limits = opts.limits ?? createUiEventLimits();

  nsp.on('connection', (socket) => {
    const p0 = socket.data.principal;
    void socket.join(`org:${p0.orgId}`);
    void socket.join(`user:${p0.userId}`);
    const attached = new Set<string>();

    /**
     * Every event takes from this socket's allowance first, before it is parsed or touches the
     * database: one flooding tab cannot stall everyone else. Over the allowance it is answered
     * RATE_LIMITED; far over it, answered and then disconnected.
     */
    const on = (event: UiEvent, handler: (body: unknown, ack?: unknown) => Promise<void>) =>
      socket.on(event, (async (body: unknown, ack?: unknown) => {
        const verdict = await limits.take(socket.id, event, socket.data.principal.userId);
        if (verdict.ok) return handler(body, ack);
        if (typeof ack === 'function') (ack as (r: unknown) => void)(verdict.reply);
        if (verdict.disconnect && socket.connected) {
          console.warn(`[server] /ui socket of ${socket.data.principal.email} disconnected: ${event} flood`);
          socket.disconnect(true);
        }
      }) as never);

    on(
      'session:attach',
      handle('session:attach', AttachSchema, async ({ session_id, after_seq, snapshot, binary }) => {
        if (!attached.has(session_id) && attached.size >= MAX_ATTACHED_PER_SOCKET) throw new AppError('CONFLICT', UI_LIMIT_MESSAGES.attached);
        const session = await services.sessions.get(await currentPrincipal(socket), session_id);
        viewers.remove(session_id, socket.id);
        const viewer: Viewer = { socket, runnerId: session.runner_id, replaying: true, buffer: [], lastSeq: after_seq, ackSeq: after_seq, binary };
        viewers.add(session_id, socket.id, viewer);
        attached.add(session_id);
        setImmediate(() => void (snapshot ? paint(session_id, viewer) : replay(session_id, viewer)));
        // A viewer who may type is about to: its right is checked now, not on the first key.
        if (!(TERMINAL_STATES as string[]).includes(session.state)) typing.warm(socket.id, session_id);
        return { session };
      }),
    );

    /**
     * Attach from the serialised screen (constant cost however long the session ran): the
     * mirror's snapshot through seq S, then the live events after S that arrived meanwhile.
     */
    async function paint(sessionId: string, viewer: Viewer) {
      try {
        const screen = await services.terminalScreens.current(sessionId);
        if (viewers.get(sessionId, socket.id) !== viewer) return; // detached meanwhile
        socket.emit('session:snapshot', { session_id: sessionId, screen, scrollback: services.terminalScreens.scrollback });
        viewer.lastSeq = screen.seq;
        finishReplay(sessionId, viewer);
      } catch (err) {
        console.error('[server] painting a terminal snapshot failed', err);
        socket.disconnect(true);
      }
    }

    /** Live events that came during the replay, then the switch to live. */
    function finishReplay(sessionId: string, viewer: Viewer) {
      // What the attach painted counts as parsed by this viewer: it never acks those seqs itself
      // (acks during a replay are not flow control), so a PTY paused for a viewer that stopped
      // acking (a frozen or hidden tab) stayed paused for every viewer who came after it.
      viewers.forwardAck(sessionId, viewer, viewer.lastSeq);
      const rest = viewer.buffer.filter((e) => e.seq > viewer.lastSeq);
      viewer.buffer = [];
      viewer.replaying = false;
      if (rest.length) {
        sendLive(sessionId, viewer, rest);
        viewer.lastSeq = rest.at(-1)!.seq;
      }
      socket.emit('session:replayed', { session_id: sessionId, through_seq: viewer.lastSeq });
    }

    async function replay(sessionId: string, viewer: Viewer) {
      try {
        for await (const page of services.events.replay(sessionId, viewer.lastSeq)) {
          if (viewers.get(sessionId, socket.id) !== viewer) return; // detached meanwhile
          socket.emit('session:events', { session_id: sessionId, events: page, replay: true });
          viewer.lastSeq = page.at(-1)!.seq;
        }
        finishReplay(sessionId, viewer);
      } catch (err) {
        console.error('[server] replay failed', err);
        socket.disconnect(true);
      }
    }

    on(
      'session:detach',
      handle('session:detach', DetachSchema, ({ session_id }) => {
        attached.delete(session_id);
        viewers.remove(session_id, socket.id);
        return null;
      }),
    );

    // The same spawn as POST /api/sessions: role, plan limits and answers are the service's.
    on(
      'session:spawn',
      handle('session:spawn', SpawnSessionBodySchema, async (body) => services.sessions.spawn(await currentPrincipal(socket), body)),
    );

    /**
     * Keys leave in the order they came: a key waiting for its right to be checked holds the
     * keys after it (only the check is in the chain, not the runner's answer).
     */
    let keysInOrder: Promise<unknown> = Promise.resolve();
    // Bench hook (key-trace.ts): registered first, so it stamps a key before anything else runs for it.
    if (keyTrace) socket.on('terminal:input', (b: { session_id?: unknown; data?: unknown }) => void (typeof b?.session_id === 'string' && typeof b.data === 'string' && keyTrace!.received(b.session_id, b.data)));
    on(
      'terminal:input',
      handle('terminal:input', UiInputSchema, async ({ session_id, data }) => {
        const send = (target: { runnerId: string }) => {
          const answer = services.sessions.sendInput(target, session_id, data);
          keyTrace?.forwarded(session_id);
          return { answer };
        };
        const cached = typing.target(socket.id, session_id);
        // Nothing before this key is waiting and its right is fresh: it goes now, without an await.
        const sent = cached instanceof Promise || keysWaiting > 0 ? queued(cached, send) : send(cached);
        await (await sent).answer;
        return null;
      }),
    );
    let keysWaiting = 0;
    function queued(target: Promise<{ runnerId: string }> | { runnerId: string }, send: (t: { runnerId: string }) => { answer: Promise<void> }) {
      keysWaiting++;
      const sent = keysInOrder.then(async () => send(await target)).finally(() => keysWaiting--);
      keysInOrder = sent.catch(() => undefined);
      return sent;
    }

    on(
      'terminal:resize',
      handle('terminal:resize', UiResizeSchema, async ({ session_id, cols, rows }) => {
        await services.sessions.resize(await currentPrincipal(socket), session_id, cols, rows);
        // The mirror reflows as the PTY does, so snapshots match what viewers see.
        services.terminalScreens.resize(session_id, cols, rows);
        return null;
      }),
    );

    on(
      'terminal:ack',
      handle('terminal:ack', UiTerminalAckSchema, ({ session_id, seq }) => {
        const viewer = viewers.get(session_id, socket.id);
        if (!viewer || viewer.replaying) return null; // acks during replay are not flow control
        viewers.forwardAck(session_id, viewer, seq);
        return null;
      }),
    );

    attachTerminalTimeTravel(on, services, () => currentPrincipal(socket));

    socket.on('disconnect', () => {
      typing.forgetSocket(socket.id);
      limits.forget(socket.id);
      for (const id of attached) viewers.remove(id, socket.id);
    });
  });

  return {
    sessionUpdated: (orgId, session) => {
      // An ended session takes no keys: whoever typed into it is checked again (and refused).
      if ((TERMINAL_STATES as string[]).includes(session.state)) typing.forgetSession(session.id);
      nsp.to(`org:${orgId}`).emit('session:updated', session);
    },
    repoUpdated: (orgId, repo) => nsp.to(`org:${orgId}`).emit('repo:updated', repo),
    runnerUpdated: (orgId, runner) => nsp.to(`org:${orgId}`).emit('runner:updated', runner),
    approvalUpdated: (orgId, approval) => nsp.to(`org:${orgId}`).emit('approval:updated', approval),
    notificationCreated: (userId, notification) => nsp.to(`user:${userId}`).emit('notification:new', notification),
    alertUpdated: (orgId, alert) => nsp.to(`org:${orgId}`).emit('alert:updated', alert),
    healthUpdated: (orgId, health) => nsp.to(`org:${orgId}`).emit('health:updated', health),
    patrolUpdated: (orgId, patrol) => nsp.to(`org:${orgId}`).emit('patrol:updated', patrol),
    patrolRunUpdated: (orgId, run) => nsp.to(`org:${orgId}`).emit('patrol-run:updated', run),
    runUpdated: (orgId, run) => nsp.to(`org:${orgId}`).emit('run:updated', run),
    dtaRunUpdated: (orgId, run) => nsp.to(`org:${orgId}`).emit('dta-run:updated', run),
    questUpdated: (orgId, quest) => nsp.to(`org:${orgId}`).emit('quest:updated', quest),
    agentsUpdated: (orgId, catalog) => nsp.to(`org:${orgId}`).emit('agents:updated', catalog),
    hasViewers: (sessionId) => viewers.watched(sessionId),
    sessionEvents(sessionId, events, utf8) {
      // The mirror first: an attach that snapshots it right after this call must include these.
      services.terminalScreens.feed(sessionId, events, utf8);
      viewers.fanOut(sessionId, events, utf8);
      keyTrace?.output(sessionId, events);
    },
  };
}
