import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { z } from 'zod';
import {
  ApiErrorSchema,
  RunnerRegisteredSchema,
  RUNNER_FRAME_VERSION,
  RUNNER_NAMESPACE,
  RUNNER_SOCKET_PATH,
  describeZodError,
  type Result,
  type RunnerRegister,
  type RunnerBlueprints,
  type RunnerRegistered,
  type RunnerToServerEvents,
  type ServerToRunnerEvents,
} from '../protocol';
import type { CommandHandlers } from './commands';
import type { TlsMaterial } from './config';
import type { RunManager } from './runs/run-manager';
import { failureFrom } from './errors';
import type { Logger } from './log';
import type { EventSender, EventTransport } from './spool/sender';
import { startFrameLog, startLoopDelayLog } from './connection-probe';
import { runnerTransports } from './connection-transport';
import { encodeRunnerFrame } from './spool/frame';
import { echoTrace } from './sessions/echo-trace';

/** A control plane that takes longer than this to answer register is treated as not there. */
export const REGISTER_TIMEOUT_MS = 10_000;
/** A batch unacked this long is assumed lost; everything unacked is resent. */
export const EVENT_ACK_TIMEOUT_MS = 30_000;
/** A heartbeat answer later than this is dropped, so unanswered ones cannot pile up in memory. */
export const HEARTBEAT_ACK_TIMEOUT_MS = 10_000;
/** Pause before dialling again after the server refused us (not the transport failing). */
export const RETRY_AFTER_REFUSAL_MS = 2_000;
/** While the server is down, say so once in a while instead of on every retry. */
export const CONNECT_ERROR_LOG_INTERVAL_MS = 30_000;
/** Socket.IO reconnect back-off: quick when the server restarts, gentle while it stays away. */
const RECONNECTION_DELAY_MS = 200;
const RECONNECTION_DELAY_MAX_MS = 2_000;

type RunnerSocket = Socket<ServerToRunnerEvents, RunnerToServerEvents>;

/** Whatever a server answers is checked before use, like any other input. */
const ResultShape = z.union([z.object({ ok: z.literal(true), data: z.unknown() }), z.object({ ok: z.literal(false), error: ApiErrorSchema })]);
export function asResult(value: unknown): Result<unknown> | null {
  const parsed = ResultShape.safeParse(value);
  return parsed.success ? (parsed.data as Result<unknown>) : null;
}

/**
 * The websocket upgrade was answered 401 (the token) or 403 (the client certificate) by the
 * runner engine's handshake: retrying cannot fix either. Returns the reason, or null.
 */
export function handshakeRefused(err: Error): string | null {
  const description = (err as Error & { description?: { message?: unknown; error?: { message?: unknown } } }).description;
  const text = [description?.message, description?.error?.message].find((m): m is string => typeof m === 'string') ?? '';
  const status = /Unexpected server response: (40[13])/.exec(text)?.[1];
  if (status === '401') return 'HTTP 401: the runner token is invalid or revoked';
  if (status === '403') return 'HTTP 403: the control plane requires a client certificate its CA signed (--cert/--key)';
  return null;
}

export interface ConnectionDeps {
  server: string;
  token: string;
  /** https:// control plane: extra CAs to trust, and the client certificate for mutual TLS. */
  tls?: TlsMaterial;
  registerBody: () => RunnerRegister;
  activeSessions: () => number;
  handlers: CommandHandlers;
  sender: EventSender;
  /** Deterministic runs: their updates are sent after every register, like the spool. */
  runs?: RunManager;
  /** The blueprints as they are now (sent again when the folder changes). */
  blueprints?: () => RunnerBlueprints;
  log: Logger;
  /** The control plane refused the token: retrying cannot help. */
  onUnauthorized: (message: string) => void;
  /** After every successful register (the first, and each after a reconnect). */
  onRegistered?: () => void;
}

const ACKED_COMMANDS = [
  'dta:start',
  'radar:compare',
  'radar:history',
  'radar:export',
  'dta:decide',
  'workitem:run',
  'workitem:run-level',
  'workitem:replay',
  'session:create',
  'session:input',
  'session:resize',
  'session:stop',
  'session:pause',
  'session:resume',
  'session:approve',
  'repo:scan',
  'repo:inspect',
  'run:start',
  'session:run_result',
] as const;

/**
 * The runner's one socket to the control plane. On every connect: register (and wait for the
 * ack), then heartbeats, then resend every unacked spooled event. Reconnects forever.
 */
export class RunnerConnection {
  private readonly socket: RunnerSocket;
  private registeredAs: RunnerRegistered | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** Event-loop delay histogram, sampled every 10 ms, reported and reset with each heartbeat. */
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });
  private retryTimer: NodeJS.Timeout | null = null;
  /** Bumped on every connect, so a late answer from an old connection is ignored. */
  private serial = 0;
  private closed = false;
  private downSince: number | null = null;
  private lastConnectErrorLog = 0;
  /** This process's identity towards the control plane (never in the environment, unlike the token). */
  private readonly instanceId = randomUUID();
  private stopLoopDelayLog: () => void = () => undefined;
  private stopFrameLog: () => void = () => undefined;

  constructor(private readonly deps: ConnectionDeps) {
    this.socket = io(`${deps.server}${RUNNER_NAMESPACE}`, {
      path: RUNNER_SOCKET_PATH,
      // The header is checked in the HTTP handshake (before a websocket exists), auth.token by the namespace.
      extraHeaders: { authorization: `Bearer ${deps.token}` },
      auth: { token: deps.token },
      // PEM text (engine.io-client's options are typed as strings; Node's TLS takes either).
      ...(deps.tls?.ca ? { ca: deps.tls.ca.toString('utf8') } : {}),
      ...(deps.tls?.cert && deps.tls.key ? { cert: deps.tls.cert.toString('utf8'), key: deps.tls.key.toString('utf8') } : {}),
      // The websocket only; its frames unmasked over TLS and loopback (connection-transport.ts).
      transports: runnerTransports(deps.server),
      reconnection: true,
      reconnectionDelay: RECONNECTION_DELAY_MS,
      reconnectionDelayMax: RECONNECTION_DELAY_MAX_MS,
      reconnectionAttempts: Infinity,
      autoConnect: false,
    });
    this.bindLifecycle();
    this.bindCommands();
  }

  get registered(): RunnerRegistered | null {
    return this.registeredAs;
  }

  get connected(): boolean {
    return this.socket.connected;
  }

  start(): void {
    this.loopDelay.enable();
    this.stopLoopDelayLog = startLoopDelayLog();
    this.stopFrameLog = startFrameLog(this.socket, () => this.bufferedBytes());
    this.deps.log.info(`connecting to ${this.deps.server}${RUNNER_SOCKET_PATH} (namespace ${RUNNER_NAMESPACE})`);
    this.socket.connect();
  }

  close(): void {
    this.closed = true;
    this.loopDelay.disable();
    this.stopLoopDelayLog();
    this.stopFrameLog();
    this.lost();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.socket.disconnect();
  }

  // ---- lifecycle ----

  private bindLifecycle(): void {
    const { log } = this.deps;
    this.socket.on('connect', () => {
      if (this.downSince !== null) log.info(`reconnected after ${Math.round((Date.now() - this.downSince) / 1000)} s`);
      this.downSince = null;
      this.register();
    });
    this.socket.on('disconnect', (reason) => {
      if (this.closed) return;
      this.lost();
      this.downSince ??= Date.now();
      log.warn(`disconnected from the control plane (${reason}); reconnecting`);
      // After a server-side disconnect Socket.IO does not retry by itself.
      if (reason === 'io server disconnect') this.retryLater();
    });
    this.socket.on('connect_error', (err) => {
      if (this.closed) return;
      this.downSince ??= Date.now();
      if (!this.socket.active) {
        // Refused by a server middleware rather than unreachable.
        const data = (err as Error & { data?: { code?: unknown } }).data;
        if (data?.code === 'UNAUTHORIZED' || /unauthori[sz]ed/i.test(err.message)) return this.unauthorized(err.message);
        log.warn(`control plane refused the connection: ${err.message}; retrying`);
        return this.retryLater();
      }
      // The handshake refused the token (or the client certificate): HTTP 403 before any websocket.
      const refusal = handshakeRefused(err);
      if (refusal) return this.unauthorized(`the handshake was refused (${refusal})`);
      const now = Date.now();
      if (now - this.lastConnectErrorLog >= CONNECT_ERROR_LOG_INTERVAL_MS) {
        this.lastConnectErrorLog = now;
        log.warn(`cannot reach the control plane at ${this.deps.server} (${err.message}); retrying`);
      }
    });
  }

  private register(): void {
    const serial = ++this.serial;
    const { log } = this.deps;
    let body: RunnerRegister;
    try {
      body = { ...this.deps.registerBody(), instance_id: this.instanceId };
    } catch (err) {
      log.error('could not build the register message', err);
      return this.reconnectLater();
    }
    this.socket.timeout(REGISTER_TIMEOUT_MS).emit('runner:register', body, (err: Error | null, raw: unknown) => {
      if (serial !== this.serial || this.closed || !this.socket.connected) return;
      if (err) {
        log.warn(`register was not answered within ${REGISTER_TIMEOUT_MS} ms; reconnecting`);
        return this.reconnectLater();
      }
      const res = asResult(raw);
      if (!res) {
        log.warn('register answer is not a Result; reconnecting');
        return this.reconnectLater();
      }
      if (!res.ok) {
        if (res.error.code === 'UNAUTHORIZED') return this.unauthorized(res.error.message);
        log.warn(`register refused: ${res.error.code} ${res.error.message}; retrying`);
        return this.reconnectLater();
      }
      const registered = RunnerRegisteredSchema.safeParse(res.data);
      if (!registered.success) {
        log.warn(`register answer malformed: ${describeZodError(registered.error)}; reconnecting`);
        return this.reconnectLater();
      }
      this.registeredAs = registered.data;
      log.info(
        `registered as ${registered.data.runner_id} for ${registered.data.org_id} (${body.sessions.length} owned session(s), heartbeat ${registered.data.heartbeat_ms} ms)`,
      );
      this.startHeartbeat(registered.data.heartbeat_ms);
      try {
        this.deps.onRegistered?.();
      } catch (err) {
        log.error('after register', err);
      }
      this.deps.sender.attach(this.transport(serial, (registered.data.frames ?? 0) >= RUNNER_FRAME_VERSION));
      this.deps.runs?.attach(this.runTransport(serial));
    });
  }

  /** The blueprints folder changed: the control plane replaces what it stored for this runner. */
  sendBlueprints(): void {
    const body = this.deps.blueprints?.();
    if (!body || !this.registeredAs || !this.socket.connected) return; // the next register carries them
    const serial = this.serial;
    this.socket.timeout(REGISTER_TIMEOUT_MS).emit('runner:blueprints', body, (err: Error | null, raw: unknown) => {
      if (serial !== this.serial) return;
      const res = err ? null : asResult(raw);
      if (res?.ok) return;
      this.deps.log.warn(`the control plane did not take the new blueprints (${res && !res.ok ? res.error.message : 'no answer'}); re-registering`);
      this.reconnectLater();
    });
  }

  private runTransport(serial: number): (batch: Parameters<RunnerToServerEvents['run:updates']>[0], done: (acked: boolean) => void) => void {
    return (batch, done) => {
      if (serial !== this.serial || !this.socket.connected) return done(false);
      this.socket.timeout(EVENT_ACK_TIMEOUT_MS).emit('run:updates', batch, (err: Error | null, raw: unknown) => {
        const res = err ? null : asResult(raw);
        if (res && !res.ok) this.deps.log.warn(`run updates refused: ${res.error.code} ${res.error.message}`);
        done(res?.ok === true);
      });
    };
  }

  /**
   * Binary frames when the control plane said in its register answer that it decodes them; JSON
   * batches to an older one, which never announced them.
   */
  private transport(serial: number, frames: boolean): EventTransport {
    return (batch, done, utf8) => {
      if (serial !== this.serial || !this.socket.connected) return done(null);
      const answered = (err: Error | null, raw: unknown) => done(err ? null : asResult(raw));
      const queued = echoTrace ? this.bufferedBytes() : 0;
      const socket = this.socket.timeout(EVENT_ACK_TIMEOUT_MS);
      if (frames) socket.emit('runner:frame', encodeRunnerFrame(batch, utf8), answered);
      else socket.emit('runner:events', batch, answered);
      echoTrace?.sent(batch, queued);
    };
  }

  /**
   * Bytes written to the socket that the kernel has not taken yet (the websocket's bufferedAmount):
   * what a batch sent now queues behind on its way to the control plane.
   */
  private bufferedBytes(): number {
    const ws = (this.socket.io.engine?.transport as unknown as { ws?: { bufferedAmount?: number } } | undefined)?.ws;
    return ws?.bufferedAmount ?? 0;
  }

  private startHeartbeat(intervalMs: number): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => {
      if (!this.socket.connected) return;
      // Health rides along: how late the event loop ran since the last beat, and memory.
      const lagMs = this.loopDelay.percentile(99) / 1e6;
      this.loopDelay.reset();
      this.socket.timeout(HEARTBEAT_ACK_TIMEOUT_MS).emit(
        'runner:heartbeat',
        {
          active_sessions: this.deps.activeSessions(),
          ts: Date.now(),
          event_loop_lag_ms: Number.isFinite(lagMs) ? Math.round(lagMs * 10) / 10 : 0,
          rss_bytes: process.memoryUsage.rss(),
        },
        () => undefined,
      );
    }, intervalMs);
    this.heartbeatTimer.unref();
  }

  /** Everything tied to one connection ends with it; in-flight batches are forgotten. */
  private lost(): void {
    this.serial++;
    this.registeredAs = null;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    this.deps.sender.detach();
    this.deps.runs?.detach();
  }

  private reconnectLater(): void {
    this.lost();
    this.socket.disconnect();
    this.retryLater();
  }

  private retryLater(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed && !this.socket.connected) this.socket.connect();
    }, RETRY_AFTER_REFUSAL_MS);
  }

  private unauthorized(message: string): void {
    this.deps.log.error(`the control plane refused this runner's token (UNAUTHORIZED: ${message}); check --token / AGENT_RUNNER_TOKEN`);
    this.close();
    this.deps.onUnauthorized(message);
  }

  // ---- commands ----

  private bindCommands(): void {
    // Handlers take unknown payloads on purpose: the server is input like any other.
    const on = this.socket.on.bind(this.socket) as unknown as (event: string, listener: (...args: unknown[]) => void) => void;
    for (const name of ACKED_COMMANDS) {
      on(name, (payload, ack) => this.answer(name, payload, ack));
    }
    on('terminal:ack', (payload) => {
      try {
        this.deps.handlers['terminal:ack'](payload);
      } catch (err) {
        this.deps.log.error('terminal:ack failed', err);
      }
    });
  }

  private answer(name: (typeof ACKED_COMMANDS)[number], payload: unknown, ack: unknown): void {
    const { log } = this.deps;
    const reply = (result: Result<unknown>) => {
      if (typeof ack !== 'function') return;
      try {
        ack(result);
      } catch (err) {
        log.error(`answering ${name} failed`, err);
      }
    };
    try {
      const result = this.deps.handlers[name](payload);
      if (result instanceof Promise) result.then(reply, (err: unknown) => reply(failureFrom(err, log, name)));
      else reply(result);
    } catch (err) {
      reply(failureFrom(err, log, name));
    }
  }
}
