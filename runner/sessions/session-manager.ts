import {
  fail,
  ok,
  type ApproveCommand,
  type DeliverRunResultCommand,
  type CreateSessionCommand,
  type Result,
  type SessionInputCommand,
  type SessionRef,
  type SessionResizeCommand,
  type TerminalAck,
} from '../../protocol';
import { Session, type SessionDeps } from './session';
import { TypingWatch } from './typing-watch';

export interface SessionManagerDeps extends SessionDeps {
  capacity: number;
}

/** Owns the live sessions of this runner; every method answers with a Result and never throws. */
export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  /** Ids used since start: a reused id would restart seq at 1 and the server would drop it as duplicates. */
  private readonly usedIds = new Set<string>();
  private shuttingDown = false;
  /** Shared by this runner's sessions: a key in one narrows the others' flow-control windows (typing-watch.ts). */
  private readonly typing: TypingWatch;

  constructor(private readonly deps: SessionManagerDeps) {
    this.typing = deps.typing ?? new TypingWatch();
  }

  get capacity(): number {
    return this.deps.capacity;
  }

  get(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  activeCount(): number {
    return this.sessions.size;
  }

  /** Sessions this runner owns: live ones and ones whose events are still unacked. */
  owned(): Array<{ session_id: string; alive: boolean }> {
    const out = new Map<string, boolean>();
    for (const sid of this.deps.spool.sessionIds()) out.set(sid, false);
    for (const [sid, s] of this.sessions) out.set(sid, s.alive || !['COMPLETED', 'FAILED'].includes(s.state));
    return [...out].map(([session_id, alive]) => ({ session_id, alive }));
  }

  /** Accepts quickly; the session reports its progress as events. */
  create(cmd: CreateSessionCommand): Result<{ session_id: string }> {
    const id = cmd.session_id;
    if (this.shuttingDown) return fail('RUNNER_ERROR', 'runner is shutting down');
    if (this.sessions.has(id) || this.usedIds.has(id) || this.deps.spool.has(id)) {
      return fail('CONFLICT', `session ${id} already exists on this runner`);
    }
    if (this.sessions.size >= this.deps.capacity) {
      return fail('NO_RUNNER', `runner is at capacity (${this.sessions.size} of ${this.deps.capacity} sessions)`);
    }
    if (!this.deps.providers.has(cmd.provider)) {
      return fail('NO_RUNNER', `provider ${cmd.provider} is not available on this runner`);
    }
    const session = new Session(cmd, { ...this.deps, typing: this.typing });
    this.sessions.set(id, session);
    this.usedIds.add(id);
    void session.done.then(() => {
      this.sessions.delete(id);
      this.typing.forget(id);
    });
    session.start();
    this.deps.log.info(`session ${id} accepted (${cmd.provider}, ${cmd.mode}, room "${cmd.room_path}")`);
    return ok({ session_id: id });
  }

  input(cmd: SessionInputCommand): Result<null> {
    const s = this.sessions.get(cmd.session_id);
    if (!s) return fail('NOT_FOUND', `session ${cmd.session_id} is not on this runner`);
    return s.input(cmd.data, cmd.mode);
  }

  resize(cmd: SessionResizeCommand): Result<null> {
    const s = this.sessions.get(cmd.session_id);
    if (!s) return fail('NOT_FOUND', `session ${cmd.session_id} is not on this runner`);
    return s.resize(cmd.cols, cmd.rows);
  }

  /** Answers once the stop has begun; COMPLETED arrives as an event. */
  stop(cmd: SessionRef, reason = 'stopped by request'): Result<null> {
    const s = this.sessions.get(cmd.session_id);
    if (!s) return fail('NOT_FOUND', `session ${cmd.session_id} is not on this runner`);
    s.stop(reason);
    return ok(null);
  }

  /** SIGSTOP of the whole session; CONFLICT unless it is RUNNING. */
  pause(cmd: SessionRef, reason?: string): Result<null> {
    const s = this.sessions.get(cmd.session_id);
    if (!s) return fail('NOT_FOUND', `session ${cmd.session_id} is not on this runner`);
    return s.pause(reason);
  }

  /** SIGCONT; CONFLICT unless it is PAUSED_BY_HUMAN. */
  resume(cmd: SessionRef, reason?: string): Result<null> {
    const s = this.sessions.get(cmd.session_id);
    if (!s) return fail('NOT_FOUND', `session ${cmd.session_id} is not on this runner`);
    return s.resume(reason);
  }

  /** Decides one pending approval (bound by id and command hash); replays and duplicates change nothing. */
  approve(cmd: ApproveCommand): Result<null> {
    const s = this.sessions.get(cmd.session_id);
    if (!s) return fail('NOT_FOUND', `session ${cmd.session_id} is not on this runner`);
    return s.approve(cmd);
  }

  /** A child run finished: into the session's stream and the agent's inbox. */
  async deliverRunResult(cmd: DeliverRunResultCommand): Promise<Result<{ inbox_path: string | null }>> {
    const s = this.sessions.get(cmd.session_id);
    if (!s) return fail('NOT_FOUND', `session ${cmd.session_id} is not on this runner (it has ended)`);
    return s.deliverRunResult(cmd);
  }

  /** After every (re)register: viewers' acks sent while the socket was down are lost, so no PTY stays paused for them. */
  releaseFlowControl(): void {
    for (const s of this.sessions.values()) s.releaseFlowControl();
  }

  terminalAck(cmd: TerminalAck): void {
    this.sessions.get(cmd.session_id)?.terminalAck(cmd.seq);
  }

  /** Refuses new sessions, stops every one, and waits until all ended and were cleaned up. */
  async stopAll(reason: string): Promise<void> {
    this.shuttingDown = true;
    const all = [...this.sessions.values()];
    for (const s of all) s.stop(reason);
    await Promise.all(all.map((s) => s.done));
  }
}
