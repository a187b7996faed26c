import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type IPty } from 'node-pty';
import { canTransition, fail, ok, type CreateSessionCommand, type ProviderId, type Result, type RunnerEventBody, type SessionState } from '../../protocol';
import { errorMessage, type Logger } from '../log';
import type { ProviderAdapter } from '../providers';
import { buildSessionEnv, createSessionHome } from '../pty/clean-env';
import { FlowControl } from '../pty/flow-control';
import { OutputBatcher } from '../pty/output-batcher';
import { signalSessionTree } from '../pty/process-tree';
import type { SessionBase, Spool } from '../spool/spool';
import type { PreparedWorktree, WorkspaceManager } from '../workspace/workspace-manager';
import { UsageMeter, type UsageWindow } from './usage-meter';

/** Time a stopping process gets to clean up after SIGTERM before the whole group gets SIGKILL. */
export const STOP_GRACE_MS = 3_000;

export interface SessionDeps {
  spool: Spool;
  workspaces: WorkspaceManager;
  providers: Map<ProviderId, ProviderAdapter>;
  homesDir: string;
  log: Logger;
  /** Tests shorten the grace period; production uses STOP_GRACE_MS. */
  stopGraceMs?: number;
}

const SIGNAL_NAMES = new Map<number, string>(Object.entries(os.constants.signals).map(([name, n]) => [n, name]));

/** The room directory when it exists in the checkout, else the worktree root. */
function startDirectory(worktree: string, room: string): string {
  if (!room) return worktree;
  const dir = path.join(worktree, room);
  try {
    if (fs.statSync(dir).isDirectory()) return dir;
  } catch {
    // The room is gone from this ref; the root is the honest fallback.
  }
  return worktree;
}

/**
 * One session: workspace, PTY, and the event stream about them. States only move forward
 * (protocol canTransition); the last event is always COMPLETED or FAILED.
 */
export class Session {
  readonly id: string;
  readonly base: SessionBase;
  state: SessionState = 'CREATED';
  pid: number | null = null;
  worktree: PreparedWorktree | null = null;
  home: string | null = null;
  readonly flow: FlowControl;
  /** Resolves after the final state change was spooled and everything was cleaned up. */
  readonly done: Promise<void>;

  private pty: IPty | null = null;
  private exited = false;
  private stopReason: string | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private readonly batcher: OutputBatcher;
  private resolveDone!: () => void;
  private finished = false;

  private readonly usage = new UsageMeter();
  private usageTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly cmd: CreateSessionCommand,
    private readonly deps: SessionDeps,
  ) {
    this.id = cmd.session_id;
    this.base = { session_id: cmd.session_id, org_id: cmd.org_id, repo_id: cmd.repo_id, repo_ref: cmd.repo };
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.batcher = new OutputBatcher((data) => this.emitChunk(data));
    this.flow = new FlowControl(
      () => this.pty?.pause(),
      () => this.pty?.resume(),
    );
  }

  /** The PTY process is running. */
  get alive(): boolean {
    return this.pty !== null && !this.exited;
  }

  start(): void {
    void this.run().catch((err) => {
      this.deps.log.error(`session ${this.id} crashed`, err);
      void this.finishWithoutProcess('FAILED', `runner error: ${errorMessage(err)}`);
    });
  }

  input(data: string, mode: 'raw' | 'line'): Result<null> {
    if (!this.alive || !this.pty) return fail('CONFLICT', `session ${this.id} is not running (${this.state})`);
    this.pty.write(mode === 'line' ? `${data}\r` : data);
    return ok(null);
  }

  resize(cols: number, rows: number): Result<null> {
    if (!this.alive || !this.pty) return fail('CONFLICT', `session ${this.id} is not running (${this.state})`);
    this.pty.resize(cols, rows);
    return ok(null);
  }

  terminalAck(seq: number): void {
    this.flow.ack(seq);
  }

  /** Idempotent. Before the process exists, the start-up notices and ends the session itself. */
  stop(reason: string): void {
    // Once the process has exited, its own exit decides the final state.
    if (this.finished || this.exited || this.stopReason !== null) return;
    this.stopReason = reason;
    if (canTransition(this.state, 'STOPPING')) this.transition('STOPPING', reason);
    if (this.alive && this.pid !== null) {
      const pid = this.pid;
      // Whatever the program prints while dying must still be read, or its exit would hang.
      this.flow.forceResume();
      signalSessionTree(pid, 'SIGTERM');
      // An interactive bash ignores SIGTERM by design; SIGHUP is what a closed terminal sends,
      // and it makes the shell exit and hang up its jobs.
      try {
        process.kill(pid, 'SIGHUP');
      } catch {
        // Already gone.
      }
      const grace = this.deps.stopGraceMs ?? STOP_GRACE_MS;
      this.killTimer = setTimeout(() => {
        this.killTimer = null;
        if (!this.exited) {
          this.deps.log.info(`session ${this.id} still alive after ${grace} ms; SIGKILL to its process group`);
          signalSessionTree(pid, 'SIGKILL');
        }
      }, grace);
    }
  }

  // ---- lifecycle ----

  private async run(): Promise<void> {
    const { cmd, deps } = this;
    const provider = deps.providers.get(cmd.provider);
    try {
      if (!provider) throw new Error(`provider ${cmd.provider} is not available on this runner`);
      const what = cmd.checkout.type === 'branch' ? `branch ${cmd.checkout.ref}` : `commit ${cmd.checkout.ref}`;
      this.transition('PREPARING_WORKSPACE', `preparing a ${cmd.mode === 'read_only' ? 'read-only' : 'writable'} worktree of ${what}`);
      this.worktree = await deps.workspaces.prepareWorktree({
        session_id: cmd.session_id,
        repo_id: cmd.repo_id,
        source: cmd.repo_source,
        checkout: cmd.checkout,
        mode: cmd.mode,
      });
      if (this.stopReason !== null) return this.finishWithoutProcess('COMPLETED', `${this.stopReason} (before the provider started)`);
      this.transition('STARTING_PROVIDER', `starting ${provider.id}`);
      this.home = await createSessionHome(deps.homesDir, cmd.session_id, cmd.room_path || cmd.repo.name);
      if (this.stopReason !== null) return this.finishWithoutProcess('COMPLETED', `${this.stopReason} (before the provider started)`);
      const cwd = startDirectory(this.worktree.path, cmd.room_path);
      const env = buildSessionEnv({ session_id: cmd.session_id, home: this.home });
      const launch = provider.launch({ session_id: cmd.session_id, home: this.home, cwd, worktree_path: this.worktree.path, env, command: cmd });
      const pty = spawn(launch.file, launch.args, { name: 'xterm-256color', cols: cmd.cols, rows: cmd.rows, cwd, env: launch.env });
      this.pty = pty;
      this.pid = pty.pid;
      pty.onData((data) => this.batcher.push(data));
      pty.onExit(({ exitCode, signal }) => {
        void this.onExit(exitCode, signal ?? 0).catch((err) => {
          this.deps.log.error(`session ${this.id} exit handling failed`, err);
          this.endNow();
        });
      });
      this.emit({
        type: 'SESSION_STARTED',
        provider: provider.id,
        room_path: cmd.room_path,
        branch: this.worktree.branch,
        worktree_path: this.worktree.path,
        pid: pty.pid,
      });
      this.transition('RUNNING', `${provider.id} running as pid ${pty.pid}`);
      this.startUsage();
      deps.log.info(`session ${this.id} running (pid ${pty.pid}) in ${cwd}`);
    } catch (err) {
      const reason = errorMessage(err);
      deps.log.warn(`session ${this.id} failed to start: ${reason}`);
      if (this.pty && !this.exited && this.pid !== null) {
        // Started but could not be reported: do not leave it running unowned.
        signalSessionTree(this.pid, 'SIGKILL');
        return;
      }
      await this.finishWithoutProcess('FAILED', reason);
    }
  }

  private async onExit(exitCode: number, signal: number): Promise<void> {
    if (this.exited) return;
    this.exited = true;
    if (this.killTimer) clearTimeout(this.killTimer);
    this.killTimer = null;
    this.batcher.flush();
    this.stopUsage(Date.now());
    // Jobs the program left behind must not outlive the worktree they run in.
    if (this.pid !== null) signalSessionTree(this.pid, 'SIGKILL');
    const signalName = signal ? (SIGNAL_NAMES.get(signal) ?? `signal ${signal}`) : null;
    const how = signalName ? `killed by ${signalName}` : `exited with code ${exitCode}`;
    let to: SessionState;
    let reason: string;
    if (this.stopReason !== null) {
      to = 'COMPLETED';
      reason = `${this.stopReason} (${how})`;
    } else if (!signalName && exitCode === 0) {
      to = 'COMPLETED';
      reason = how;
    } else {
      to = 'FAILED';
      reason = how;
    }
    this.deps.log.info(`session ${this.id} ${how}`);
    await this.cleanup();
    this.finish(to, reason, signalName ? null : exitCode);
  }

  private async finishWithoutProcess(to: SessionState, reason: string): Promise<void> {
    if (this.finished) return;
    await this.cleanup();
    this.finish(to, reason, null);
  }

  private async cleanup(): Promise<void> {
    this.stopUsageTimer();
    const { workspaces, log } = this.deps;
    if (this.worktree || fs.existsSync(workspaces.worktreePath(this.id))) {
      await workspaces.removeWorktree(this.id).catch((err) => log.error(`could not remove the worktree of ${this.id}`, err));
    }
    if (this.home) {
      await fs.promises.rm(this.home, { recursive: true, force: true }).catch((err) => log.error(`could not remove the home of ${this.id}`, err));
    }
  }

  private finish(to: SessionState, reason: string, exitCode: number | null): void {
    if (this.finished) return;
    if (!canTransition(this.state, to)) to = canTransition(this.state, 'FAILED') ? 'FAILED' : to;
    this.transition(to, reason, exitCode);
    this.finished = true;
    this.pty = null;
    this.resolveDone();
  }

  /** Last resort when exit handling itself broke: the session must still end. */
  private endNow(): void {
    this.finish('FAILED', 'runner error while the session ended', null);
  }

  private transition(to: SessionState, reason: string, exitCode?: number | null): void {
    const from = this.state;
    if (!canTransition(from, to)) {
      this.deps.log.warn(`session ${this.id}: ignored transition ${from} → ${to}`);
      return;
    }
    this.state = to;
    this.emit({
      type: 'SESSION_STATE_CHANGED',
      from,
      to,
      reason: reason.slice(0, 2000),
      ...(exitCode !== undefined ? { exit_code: exitCode } : {}),
    });
  }

  /** Spooling must never throw into a PTY callback; a failure here is logged loudly. */
  private emit(body: RunnerEventBody): number | null {
    try {
      return this.deps.spool.append(this.base, body)?.seq ?? null;
    } catch (err) {
      this.deps.log.error(`could not spool ${body.type} for ${this.id}`, err);
      return null;
    }
  }

  private emitChunk(data: string): void {
    const seq = this.emit({ type: 'TERMINAL_CHUNK', data });
    this.usage.addOutput(Buffer.byteLength(data));
    if (seq !== null) this.flow.chunkSent(seq, data.length);
  }

  // ---- usage ----

  private startUsage(): void {
    this.usage.start(Date.now());
    this.scheduleUsage();
  }

  private scheduleUsage(): void {
    this.usageTimer = setTimeout(() => {
      this.usageTimer = null;
      this.emitUsage(this.usage.closeWindowsUntil(Date.now()));
      this.scheduleUsage();
    }, Math.max(0, this.usage.nextBoundary - Date.now()));
  }

  private emitUsage(windows: UsageWindow[]): void {
    for (const w of windows) {
      this.emit({
        type: 'USAGE_TICK',
        provider: this.cmd.provider,
        window_start: w.window_start,
        units: { agent_seconds: w.agent_seconds, terminal_kb: w.terminal_kb, files_touched: 0 },
      });
    }
  }

  private stopUsageTimer(): void {
    if (this.usageTimer) clearTimeout(this.usageTimer);
    this.usageTimer = null;
  }

  /** The partial last window is billed too. */
  private stopUsage(now: number): void {
    this.stopUsageTimer();
    this.emitUsage(this.usage.finish(now));
  }
}
