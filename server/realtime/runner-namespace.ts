import type { Namespace, Server, Socket } from 'socket.io';
import {
  fail,
  RunnerEventBatchSchema,
  RunnerFrameBatchSchema,
  RUNNER_FRAME_VERSION,
  RunnerHeartbeatSchema,
  RunnerBlueprintsSchema,
  RunnerRegisterSchema,
  RunUpdateBatchSchema,
  RUNNER_NAMESPACE,
  type Result,
  type RunnerRegister,
  type RunnerToServerEvents,
  type ServerToRunnerEvents,
} from '../../protocol';
import type { Services } from '../services';
import { AppError } from '../services/errors';
import type { RunnerGateway } from '../services/ports';
import { keepRunnerUtf8 } from '../services/runner-utf8';
import { RUNNER_HEARTBEAT_MS, type RunnerIdentity } from '../services/runners';
import { handle } from './handler';
import { handshakeOf } from './runner-handshake';
import { createRunnerCluster, runnerRoom } from './runner-cluster';
import type { Held } from '../services/leases';

/** A runner that does not answer a command in this time is treated as failed for that command. */
const COMMAND_TIMEOUT_MS = 15_000;
/**
 * Commands that may first clone the repository (the runner's ensureClone) take what the
 * repository's size and the network need: a 15 s cap failed every large repository's first scan,
 * and any scan on a loaded machine (a 2,000-directory repository under load 17–20 in CI).
 */
export const CLONE_COMMAND_TIMEOUT_MS = 30 * 60_000;
const CLONING_COMMANDS: ReadonlySet<string> = new Set(['repo:scan', 'repo:inspect', 'session:create']);
export const commandTimeoutMs = (name: string) => (CLONING_COMMANDS.has(name) ? CLONE_COMMAND_TIMEOUT_MS : COMMAND_TIMEOUT_MS);
/** No heartbeat for this long (9 missed beats) and the runner is dropped as lost. */
export const RUNNER_LOST_AFTER_MS = 45_000;
/** How often the silent-runner sweep runs. */
const SWEEP_MS = 5_000;
/**
 * A runner that heartbeat within this window (3 beats) is alive: a second connection claiming its
 * name is refused. Older than that, the old socket is fenced (dropped) and the newcomer takes over.
 */
export const RUNNER_FRESH_MS = 3 * RUNNER_HEARTBEAT_MS;
/** A refused claimant that keeps retrying is audited once per this interval (per runner and address). */
export const TAKEOVER_AUDIT_INTERVAL_MS = 60_000;
/** Throttle entries kept (runner × address); past this the table starts over. */
const MAX_TAKEOVER_AUDIT_KEYS = 10_000;
/** Let the refusal's ack reach the claimant before its socket is closed. */
const REFUSED_DISCONNECT_DELAY_MS = 50;

interface RunnerSocketData {
  identity: RunnerIdentity | null;
  runnerId?: string;
  runnerName?: string;
  /** This node's lease on the runner's connection (renewed by heartbeats). */
  lease?: Held;
}
type RunnerSocket = Socket<RunnerToServerEvents, ServerToRunnerEvents, Record<string, never>, RunnerSocketData>;

/** The /runner namespace: runners dial in with a token, register, heartbeat and stream events. */
/** The gateway, and how a closing control plane waits for the writes its runners' disconnects started. */
export interface RunnerNamespace extends RunnerGateway {
  settle(): Promise<void>;
}

export function attachRunnerNamespace(io: Server, services: Services, opts: { clustered?: () => boolean } = {}): RunnerNamespace {
  const nsp = io.of(RUNNER_NAMESPACE) as unknown as Namespace<RunnerToServerEvents, ServerToRunnerEvents, Record<string, never>, RunnerSocketData>;
  const dropLocalToken = (tokenId: string) => {
    for (const socket of nsp.sockets.values()) {
      if (socket.data.identity?.tokenId === tokenId) socket.disconnect(true);
    }
  };
  // Runners connected to other control-plane nodes (issue 18): reached through the adapter.
  const cluster = createRunnerCluster(nsp as unknown as Namespace, opts.clustered ?? (() => false), dropLocalToken);
  const connected = new Map<
    string,
    { socket: RunnerSocket; active: number; lastBeat: number; lag: number | null; rss: number | null }
  >();
  const lastTakeoverAudit = new Map<string, number>();
  // A disconnect's writes (runner offline, its blueprints dropped) outlive the handler: on shutdown,
  // io.close() disconnects every runner at once and the database must stay open until they are done.
  const disconnecting = new Set<Promise<unknown>>();
  const track = (what: string, work: Promise<unknown>) => {
    const p = work.catch((e) => console.error(`[server] ${what}`, e)).finally(() => disconnecting.delete(p));
    disconnecting.add(p);
  };
  // A runner whose socket stays open but which stopped heartbeating (hung) is lost all the same.
  setInterval(() => {
    const now = Date.now();
    for (const [id, entry] of connected) {
      if (now - entry.lastBeat > RUNNER_LOST_AFTER_MS) {
        console.error(`[server] runner ${id} missed its heartbeats for ${RUNNER_LOST_AFTER_MS} ms: dropping it`);
        entry.socket.disconnect(true);
      }
    }
  }, SWEEP_MS).unref();

  // The engine's handshake already checked the Authorization header (runner-engine.ts); the
  // Socket.IO auth payload must carry the same, still valid token, or the namespace is refused.
  nsp.use(async (socket, next) => {
    const refuse = (message: string) => next(Object.assign(new Error(`UNAUTHORIZED: ${message}`), { data: { code: 'UNAUTHORIZED', message } }));
    try {
      const shake = handshakeOf(socket.request);
      const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
      if (!shake || typeof token !== 'string' || token !== shake.token) return refuse('the runner token is missing, or differs from the handshake’s.');
      const identity = await services.runners.verifyToken(token);
      if (!identity || identity.tokenId !== shake.identity.tokenId) return refuse('the runner token is invalid or revoked.');
      socket.data.identity = identity;
      next();
    } catch (err) {
      console.error('[server] runner namespace auth failed', err);
      next(new Error('the runner handshake failed'));
    }
  });

  /**
   * (The alert text names no address: every org member sees runner summaries; the address is in
   * the audit entry, which only admins read.)
   *
   * Issue 11 item 2: a stolen token must not silently take over a live runner. The same process
   * (same instance_id) may replace its own socket; anyone else is refused while the runner
   * heartbeats, and fences it (drops the old socket) only once it has gone silent. Either way an
   * audit entry and an alert for admins record it.
   */
  async function claimName(socket: RunnerSocket, identity: RunnerIdentity, body: RunnerRegister): Promise<void> {
    const row = await services.runners.liveness(identity.orgId, body.name);
    if (!row) return;
    const local = connected.get(row.id);
    if (local?.socket.id === socket.id) return;
    // The same process coming back (its old socket not yet noticed as gone): its own to replace.
    if (body.instance_id && row.instanceId === body.instance_id) return;
    const lastBeat = Math.max(row.lastSeenAt.getTime(), local?.lastBeat ?? 0);
    const present = row.online || local?.socket.connected === true;
    if (!present) return;
    const ip = socket.handshake.address || null;
    const silentMs = Date.now() - lastBeat;
    if (silentMs <= RUNNER_FRESH_MS) {
      const key = `${row.id}|${ip}`;
      const last = lastTakeoverAudit.get(key) ?? 0;
      if (Date.now() - last >= TAKEOVER_AUDIT_INTERVAL_MS) {
        // Old entries only throttle; dropping them costs at most one more audit row each.
        if (lastTakeoverAudit.size >= MAX_TAKEOVER_AUDIT_KEYS) lastTakeoverAudit.clear();
        lastTakeoverAudit.set(key, Date.now());
        await services.runners.securityAlert(row.id, {
          action: 'runner.takeover_refused',
          message: `A second connection tried to register as runner ${body.name} while it was connected and alive; it was refused. If this was not a restart of that runner, its token may have leaked: revoke it.`,
          tokenId: identity.tokenId,
          ip,
        });
      }
      console.error(`[server] refused a second connection for live runner ${body.name}${ip ? ` from ${ip}` : ''}`);
      setTimeout(() => socket.disconnect(true), REFUSED_DISCONNECT_DELAY_MS);
      throw new AppError('CONFLICT', `Runner ${body.name} is already connected and alive; a second connection with its name is refused.`);
    }
    await services.runners.securityAlert(row.id, {
      action: 'runner.fenced',
      message: `A new connection registered as runner ${body.name} after the old one was silent for ${Math.round(silentMs / 1000)} s; the old connection was dropped.`,
      tokenId: identity.tokenId,
      ip,
    });
    // register() then drops the old socket (when it is on this node) and takes its place.
  }

  /** A runner's socket closed: if it is the one this node holds for the runner, the runner is offline. */
  const dropRunner = (socket: RunnerSocket) => {
    const id = socket.data.runnerId;
    if (id && connected.get(id)?.socket.id === socket.id) {
      connected.delete(id);
      const orgId = socket.data.identity!.orgId;
      track('dropping blueprints', services.blueprints.dropRunner(id, orgId));
      cluster.announce({ runnerId: id, online: false, active: 0, lag: null, rss: null });
      services.events.forgetRunner(id);
      track('runner offline', services.runners.disconnected(id, socket.data.lease));
    }
  };

  nsp.on('connection', (socket) => {
    const requireRunner = () => {
      if (!socket.data.identity || !socket.data.runnerId) throw new AppError('UNAUTHORIZED', 'Register first.');
      return { id: socket.data.runnerId, orgId: socket.data.identity.orgId, name: socket.data.runnerName ?? '' };
    };

    socket.on(
      'runner:register',
      handle('runner:register', RunnerRegisterSchema, async (body) => {
        const identity = socket.data.identity;
        if (!identity) throw new AppError('UNAUTHORIZED', 'The runner token is invalid or revoked.');
        await claimName(socket, identity, body);
        const { runner, lease } = await services.runners.register(identity, body);
        const previous = connected.get(runner.id);
        if (previous && previous.socket.id !== socket.id) {
          // Out of the map first, so the old socket's disconnect does not mark the runner offline.
          connected.delete(runner.id);
          previous.socket.disconnect(true);
        }
        connected.set(runner.id, {
          socket,
          active: body.sessions.filter((s) => s.alive).length,
          lastBeat: Date.now(),
          lag: null,
          rss: null,
        });
        socket.data.runnerId = runner.id;
        socket.data.runnerName = runner.name;
        socket.data.lease = lease;
        if (socket.disconnected) {
          // It closed while the row was written: its disconnect found no runner on it, so nothing
          // would ever mark the runner offline or take this dead socket out of the map.
          dropRunner(socket);
          throw new AppError('CONFLICT', 'The runner’s connection closed while it registered; it registers again when it reconnects.');
        }
        // Commands from any node reach it through its room (runner-cluster.ts).
        await socket.join(runnerRoom(runner.id));
        cluster.announce({ runnerId: runner.id, online: true, active: connected.get(runner.id)!.active, lag: null, rss: null });
        // Its deterministic agents are bound to it from now on (and deleted when it leaves).
        await services.blueprints.replace({ id: runner.id, orgId: identity.orgId }, body.blueprints, body.blueprint_problems);
        await services.runs.reconcile({ id: runner.id, orgId: identity.orgId }, body.runs.map((r) => r.run_id));
        services.ports.broadcast!.runnerUpdated(identity.orgId, services.runners.summary(runner));
        // Repositories added while no runner was online get their scan now.
        setImmediate(() => void services.repos.scanPending(identity.orgId).catch((e) => console.error('[server] scan', e)));
        for (const s of await services.sessions.list(identity.orgId)) services.ports.broadcast!.sessionUpdated(identity.orgId, s);
        return { runner_id: runner.id, org_id: identity.orgId, heartbeat_ms: RUNNER_HEARTBEAT_MS, frames: RUNNER_FRAME_VERSION };
      }),
    );

    socket.on(
      'runner:heartbeat',
      handle('runner:heartbeat', RunnerHeartbeatSchema, async (body) => {
        const r = requireRunner();
        const entry = connected.get(r.id);
        if (entry) {
          entry.active = body.active_sessions;
          entry.lastBeat = Date.now();
          entry.lag = body.event_loop_lag_ms ?? null;
          entry.rss = body.rss_bytes ?? null;
        }
        if (!(await services.runners.heartbeat(r.id, socket.data.lease))) {
          // Fenced: the runner registered through another node, which owns it now.
          console.error(`[server] runner ${r.name} is owned by another control-plane node now: dropping this connection`);
          if (connected.get(r.id)?.socket.id === socket.id) connected.delete(r.id);
          socket.data.lease = undefined;
          setTimeout(() => socket.disconnect(true), REFUSED_DISCONNECT_DELAY_MS);
          throw new AppError('CONFLICT', 'Another control-plane node owns this runner now.');
        }
        if (entry) cluster.announce({ runnerId: r.id, online: true, active: entry.active, lag: entry.lag, rss: entry.rss });
        return { ts: Date.now() };
      }),
    );

    socket.on(
      'runner:events',
      handle('runner:events', RunnerEventBatchSchema, (batch) => services.events.ingest(requireRunner(), batch)),
    );

    // The same batch as a binary frame (runner-frame.ts): decoded to the events above before the
    // ingest; the bytes each chunk came in can go to viewers as they are (runner-utf8.ts).
    socket.on(
      'runner:frame',
      handle('runner:frame', RunnerFrameBatchSchema, (frame) => {
        keepRunnerUtf8(frame.events, frame.utf8);
        return services.events.ingest(requireRunner(), frame.events);
      }),
    );

    socket.on(
      'runner:blueprints',
      handle('runner:blueprints', RunnerBlueprintsSchema, async (body) => {
        const r = requireRunner();
        return { stored: await services.blueprints.replace(r, body.blueprints, body.problems) };
      }),
    );

    socket.on(
      'run:updates',
      handle('run:updates', RunUpdateBatchSchema, async (batch) => services.runs.ingest(requireRunner(), batch)),
    );

    socket.on('disconnect', () => dropRunner(socket));
  });

  return {
    isOnline: (runnerId) => connected.has(runnerId) || !!cluster.remote(runnerId),
    activeSessions: (runnerId) => connected.get(runnerId)?.active ?? cluster.remote(runnerId)?.active ?? 0,
    health: (runnerId) => {
      const e = connected.get(runnerId) ?? cluster.remote(runnerId);
      return { event_loop_lag_ms: e?.lag ?? null, rss_bytes: e?.rss ?? null };
    },
    command(runnerId, name, body) {
      const entry = connected.get(runnerId);
      if (!entry) return cluster.command(runnerId, name, body, commandTimeoutMs(name)) as never;
      return new Promise((resolve) => {
        // socket.io's typed emit cannot express "the ack of K" generically.
        (entry.socket.timeout(commandTimeoutMs(name)) as unknown as { emit: (...a: unknown[]) => void }).emit(
          name,
          body,
          (err: Error | null, res: Result<unknown>) => {
            if (err) return resolve(fail('RUNNER_ERROR', 'The runner did not answer in time.'));
            if (!res || typeof res !== 'object' || typeof res.ok !== 'boolean') {
              return resolve(fail('RUNNER_ERROR', 'The runner sent a malformed answer.'));
            }
            resolve(res as never);
          },
        );
      });
    },
    notify(runnerId, name, body) {
      const entry = connected.get(runnerId);
      if (entry) entry.socket.emit(name, body);
      else cluster.notify(runnerId, name, body);
    },
    dropToken(tokenId) {
      dropLocalToken(tokenId);
      cluster.dropToken(tokenId);
    },
    async settle() {
      while (disconnecting.size) await Promise.all(disconnecting);
    },
  };
}
