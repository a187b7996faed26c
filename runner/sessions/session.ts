import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type IPty } from 'node-pty';
import {
  canTransition,
  DETERMINISTIC_LIMITS,
  fail,
  ok,
  type AgentActivity,
  type CreateSessionCommand,
  type DeliverRunResultCommand,
  type ProviderId,
  type Result,
  type RunnerEventBody,
  type SessionState,
} from '../../protocol';
import { SessionHooks, type HookServer } from '../hooks';
import { errorMessage, type Logger } from '../log';
import type { ProviderAdapter } from '../providers';
import { buildSessionEnv, createSessionHome, inboxDir } from '../pty/clean-env';
import { FlowControl } from '../pty/flow-control';
import { OutputBatcher } from '../pty/output-batcher';
import { sessionProcessStates, signalSessionTree } from '../pty/process-tree';
import type { SessionBase, Spool } from '../spool/spool';
import { isIgnoredPath, WorktreeWatcher, type WatchChange } from '../watch/worktree-watcher';
import { computeDiff, revertPath } from '../workspace/diff';
import { readOnlyLaunch } from '../workspace/read-only';
import type { PreparedWorktree, WorkspaceManager } from '../workspace/workspace-manager';
import { UsageMeter, type UsageWindow } from './usage-meter';
import { ApprovalBroker } from '../approvals/broker';
import { PolicyGate } from '../approvals/gate';
import type { ApprovalJournal } from '../approvals/journal';
import { effectivePolicy, type EffectivePolicy } from '../policy/classify';
import { pathGuard, type PathGuard } from '../policy/paths';
import { runSessionDta } from '../dta/session-dta';
import { strictToolsFor } from '../dta/strict-tools';
import { protectedFiles, renderPolicyBash, sandboxLaunch, SCRATCH_DIRS, writeShims } from '../shims';
import { git } from '../workspace/git';
import { logRedaction } from '../../protocol/log-redaction';
import { createRedactor, createStreamRedactor, redactStrings, type Redactor, type StreamRedactor } from '../../protocol/redact';
import { PatrolOutput, patrolErrorEvent, patrolResultEvents, preparePatrolLaunch } from '../patrols/patrol-run';

/** Time a stopping process gets to clean up after SIGTERM before the whole group gets SIGKILL. */
export const STOP_GRACE_MS = 3_000;
/** No PTY output and no input for this long: the agent shows as idle (ARCHITECTURE.md §6 "idle for N minutes"). */
export const IDLE_AFTER_MS = 2 * 60_000;
/** DIFF_SUMMARY runs git at most this often while files keep changing (git diff of a big tree is not free). */
export const DIFF_MIN_INTERVAL_MS = 3_000;
/** The same file reported by hooks and the watcher (or written again and again) is one FILE_TOUCHED per this window. */
export const FILE_TOUCHED_DEDUPE_MS = 2_000;
/** How many entries the dedupe map holds before old ones are dropped (it must not grow with the session). */
const FILE_TOUCHED_DEDUPE_MAX_KEYS = 2_000;
/**
 * inotify events are read by the event loop, not when the write happens: a program that writes and
 * exits at once may end before its last write was seen. The final flush waits this long first.
 */
const FINAL_WATCH_SETTLE_MS = 50;
/** A process forking while the pause signals go out can escape one pass; a few passes catch it. */
const PAUSE_SIGNAL_PASSES = 3;

export type ActivityKind = AgentActivity['activity'];
export type FileTouchReason = 'write' | 'read' | 'diff';

export interface SessionDeps {
  spool: Spool;
  workspaces: WorkspaceManager;
  providers: Map<ProviderId, ProviderAdapter>;
  homesDir: string;
  log: Logger;
  /** Tests shorten the grace period; production uses STOP_GRACE_MS. */
  stopGraceMs?: number;
  /** The hook channel the agent CLIs call back on (runner/hooks); without it sessions get no hook signals. */
  hooks?: HookServer;
  /** Tests shorten these; production uses the constants above. */
  idleAfterMs?: number;
  diffIntervalMs?: number;
  fileTouchedDedupeMs?: number;
  watchDebounceMs?: number;
  /**
   * Read-only sessions run in a mount namespace with their worktree mounted read-only (see
   * workspace/read-only.ts); the runner probes once whether that works here. Without it, writes
   * are detected by the watcher and reverted.
   */
  readOnlyPrevention?: boolean;
  /**
   * The session may run in its own mount (and network) namespace: guard wrappers bind-mounted over
   * the real binaries, forbidden files read-only, restricted network. Without it: PATH shims only,
   * path guards detect and revert, and a restricted-network session refuses to start.
   */
  guardNamespace?: boolean;
  /** Pending approvals on disk, so a restart can report them denied (runner/approvals/journal.ts). */
  approvalJournal?: ApprovalJournal;
}

function describeDuration(ms: number): string {
  if (ms >= 60_000) {
    const min = Math.round(ms / 60_000);
    return `${min} minute${min === 1 ? '' : 's'}`;
  }
  if (ms >= 1000) {
    const s = Math.round(ms / 1000);
    return `${s} second${s === 1 ? '' : 's'}`;
  }
  return `${ms} ms`;
}

/** A tail the stream redactor holds back is released after this long without more output. */
export const REDACT_QUIET_FLUSH_MS = 10;
/** Event fields that are identifiers or enums, never free text: not passed through the redactor. */
const KEPT_FIELDS = new Set(['type', 'session_id', 'org_id', 'repo_id', 'approval_id', 'command_hash', 'provider', 'category', 'risk', 'decision', 'from', 'to', 'outcome', 'source', 'activity', 'severity']);
const isKeptField = (key: string) => KEPT_FIELDS.has(key);

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
  /** The terminal stream, masked before it is spooled (a secret split across chunks is held briefly). */
  private readonly streamRedactor: StreamRedactor;
  /** Every other event's strings, masked before they are spooled. */
  private readonly redactor: Redactor;
  private redactFlushTimer: NodeJS.Timeout | null = null;
  private resolveDone!: () => void;
  private finished = false;

  private readonly usage = new UsageMeter();
  private usageTimer: NodeJS.Timeout | null = null;

  private activity: ActivityKind | null = null;
  private lastIoAt = 0;
  private idleTimer: NodeJS.Timeout | null = null;

  private watcher: WorktreeWatcher | null = null;
  private hookChannel: SessionHooks | null = null;
  /** `reason\0path` → when it was last reported. */
  private readonly touched = new Map<string, number>();
  /** What the last DIFF_SUMMARY said; a clean worktree needs no event. */
  private lastDiff = '[]';
  private diffDirty = false;
  private diffTimer: NodeJS.Timeout | null = null;
  private diffRunning: Promise<void> | null = null;
  private lastDiffAt = 0;
  /** Set once the final summary is being made; no interim one may follow it. */
  private diffClosed = false;
  /** Reverts of a read-only session run one after the other. */
  private reverts: Promise<void> = Promise.resolve();

  /** Set for a patrol (cmd.patrol): its output is kept and read for findings when it ends. */
  private readonly patrolOutput: PatrolOutput | null;
  private patrolTimer: NodeJS.Timeout | null = null;
  private readonly createdAt = Date.now();

  /** Policy as enforced here (defaults filled in), the one ask path, and the checks that use it. */
  readonly policy: EffectivePolicy;
  readonly broker: ApprovalBroker;
  private readonly gate: PolicyGate;
  private readonly paths: PathGuard;

  constructor(
    readonly cmd: CreateSessionCommand,
    private readonly deps: SessionDeps,
  ) {
    this.id = cmd.session_id;
    this.base = { session_id: cmd.session_id, org_id: cmd.org_id, repo_id: cmd.repo_id, repo_ref: cmd.repo };
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const secretValues = Object.values(cmd.secrets ?? {});
    logRedaction.remember(secretValues);
    this.streamRedactor = createStreamRedactor(secretValues);
    this.redactor = createRedactor(secretValues);
    this.batcher = new OutputBatcher((data) => this.emitRedacted(data));
    this.flow = new FlowControl(
      () => this.pty?.pause(),
      () => this.pty?.resume(),
    );
    this.patrolOutput = cmd.patrol ? new PatrolOutput() : null;
    this.policy = effectivePolicy(cmd.policy);
    this.paths = pathGuard(this.policy);
    this.broker = new ApprovalBroker(
      cmd.session_id,
      { emit: (body) => void this.emit(body), waiting: (w) => this.onApprovalWaiting(w) },
      this.policy.approvalTimeoutMs,
      deps.approvalJournal ?? null,
    );
    this.gate = new PolicyGate({ policy: this.policy, broker: this.broker, emit: (body) => void this.emit(body), secrets: cmd.secrets ?? {} });
  }

  /** session:approve: only the pending request with this id AND command hash is decided. */
  approve(input: { approval_id: string; command_hash: string; decision: 'allow' | 'deny'; note?: string; decided_by: string }): Result<null> {
    return this.broker.decide(input);
  }

  /**
   * A deterministic run started with this session as its parent finished. The whole result goes
   * to `$AGENT_VILLAGE_INBOX/<run_id>.json` (the agent reads it like any file), a RUN_RESULT event
   * into the session's stream, and Claude Code is told at its next hook call.
   */
  async deliverRunResult(cmd: DeliverRunResultCommand): Promise<Result<{ inbox_path: string | null }>> {
    if (this.finished) return fail('CONFLICT', `session ${this.id} has ended`);
    let inboxPath: string | null = null;
    if (this.home) {
      const dir = inboxDir(this.home);
      const file = path.join(dir, `${cmd.run_id}.json`);
      const body = {
        run_id: cmd.run_id,
        agent_name: cmd.agent_name,
        status: cmd.status,
        result_type: cmd.result_type,
        exit_code: cmd.exit_code,
        error: cmd.error,
        result_data: cmd.result_data,
        result_text: cmd.result_text,
      };
      try {
        await fs.promises.mkdir(dir, { recursive: true });
        await fs.promises.writeFile(`${file}.tmp`, JSON.stringify(body, null, 2) + '\n');
        await fs.promises.rename(`${file}.tmp`, file);
        inboxPath = file;
      } catch (err) {
        this.deps.log.warn(`session ${this.id}: could not write the result of ${cmd.run_id} to the inbox: ${errorMessage(err)}`);
      }
    }
    if (this.finished) return fail('CONFLICT', `session ${this.id} has ended`);
    const text = cmd.result_text.length > DETERMINISTIC_LIMITS.MAX_CALLBACK_TEXT ? cmd.result_text.slice(0, DETERMINISTIC_LIMITS.MAX_CALLBACK_TEXT) : cmd.result_text;
    this.emit({
      type: 'RUN_RESULT',
      run_id: cmd.run_id,
      agent_name: cmd.agent_name,
      status: cmd.status,
      result_type: 'procedural',
      result_text: text,
      result_data: text.length === cmd.result_text.length ? cmd.result_data : null,
      exit_code: cmd.exit_code,
      error: cmd.error,
      inbox_path: inboxPath,
    });
    const summary = cmd.status === 'completed' ? `completed (exit code ${cmd.exit_code ?? '?'})` : `failed: ${cmd.error ?? 'unknown error'}`;
    this.hookChannel?.notify(
      `Agent Village: the deterministic agent "${cmd.agent_name}" (run ${cmd.run_id}) that was started for this session ${summary}.` +
        (inboxPath ? ` Its full result (JSON with result_data, result_text, exit_code) is in ${inboxPath}.` : '') +
        (cmd.result_text ? ` stdout begins: ${cmd.result_text.slice(0, 1000)}` : ''),
    );
    return ok({ inbox_path: inboxPath });
  }

  /** RUNNING ⇄ WAITING_FOR_APPROVAL follows whether any approval is pending. */
  private onApprovalWaiting(waiting: boolean): void {
    if (this.finished) return;
    if (waiting && this.state === 'RUNNING') this.transition('WAITING_FOR_APPROVAL', 'waiting for an approval');
    else if (!waiting && this.state === 'WAITING_FOR_APPROVAL') this.transition('RUNNING', 'no approval pending');
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
    if (this.cmd.patrol) return fail('CONFLICT', 'a patrol runs on its own and takes no input');
    if (!this.alive || !this.pty) return fail('CONFLICT', `session ${this.id} is not running (${this.state})`);
    // A stopped process reads nothing; keystrokes would pile up and all arrive at resume.
    if (this.state === 'PAUSED_BY_HUMAN') return fail('CONFLICT', `session ${this.id} is paused; resume it first`);
    this.pty.write(mode === 'line' ? `${data}\r` : data);
    this.noteIo();
    return ok(null);
  }

  /** SIGSTOP to every process of the session; usage and idle detection stop counting. */
  pause(reason = 'paused from the control plane'): Result<null> {
    if (this.state !== 'RUNNING' || !this.alive || this.pid === null) {
      return fail('CONFLICT', `session ${this.id} cannot be paused: it is ${this.state}`);
    }
    const pid = this.pid;
    signalSessionTree(pid, 'SIGSTOP');
    for (let i = 1; i < PAUSE_SIGNAL_PASSES; i++) {
      // Delivery is asynchronous, so a process may still show as running; a second SIGSTOP is harmless.
      if ([...sessionProcessStates(pid).values()].every((st) => st === 'T')) break;
      signalSessionTree(pid, 'SIGSTOP');
    }
    this.transition('PAUSED_BY_HUMAN', reason);
    this.emitUsage(this.usage.pause(Date.now()));
    this.clearIdleTimer();
    return ok(null);
  }

  /** SIGCONT, jobs before their shell; back to RUNNING. */
  resume(reason = 'resumed from the control plane'): Result<null> {
    if (this.state !== 'PAUSED_BY_HUMAN' || !this.alive || this.pid === null) {
      return fail('CONFLICT', `session ${this.id} is not paused (it is ${this.state})`);
    }
    signalSessionTree(this.pid, 'SIGCONT', { leaderLast: true });
    this.transition('RUNNING', reason);
    this.emitUsage(this.usage.resume(Date.now()));
    this.lastIoAt = Date.now();
    this.scheduleIdle();
    return ok(null);
  }

  /** What the agent is doing, as last reported (null before anything said so). */
  get currentActivity(): ActivityKind | null {
    return this.activity;
  }

  /**
   * The one way to report AGENT_ACTIVITY (provider hooks and the runner's idle detection both
   * use it): emits only when the activity changes. Returns whether it emitted.
   */
  setActivity(activity: ActivityKind, detail: string, since = Date.now()): boolean {
    if (this.finished || this.exited || this.activity === activity) return false;
    this.activity = activity;
    this.emit({ type: 'AGENT_ACTIVITY', activity, detail: detail.slice(0, 2000), since });
    if (activity === 'working') {
      this.lastIoAt = Date.now();
      this.scheduleIdle();
    }
    return true;
  }

  /**
   * The one way to report FILE_TOUCHED (provider hooks and the file watcher both use it): `file`
   * is relative to the worktree or absolute inside it. The same (reason, file) within
   * FILE_TOUCHED_DEDUPE_MS is reported once, whoever noticed it. Returns whether it emitted.
   */
  noteFileTouched(file: string, reason: FileTouchReason, source: string): boolean {
    const wt = this.worktree?.path;
    if (!wt || this.finished) return false;
    let rel = path.isAbsolute(file) ? path.relative(wt, file) : file;
    rel = path.posix.normalize(rel.split(path.sep).join('/')).replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (!rel || rel === '.' || rel === '..' || rel.startsWith('../') || path.posix.isAbsolute(rel)) return false;
    if (rel.split('/').includes('.git')) return false;
    const now = Date.now();
    const window = this.deps.fileTouchedDedupeMs ?? FILE_TOUCHED_DEDUPE_MS;
    const key = `${reason}\0${rel}`;
    const last = this.touched.get(key);
    if (last !== undefined && now - last < window) return false;
    if (this.touched.size >= FILE_TOUCHED_DEDUPE_MAX_KEYS) {
      for (const [k, t] of this.touched) if (now - t >= window) this.touched.delete(k);
    }
    this.touched.set(key, now);
    const dir = path.posix.dirname(rel);
    this.emit({ type: 'FILE_TOUCHED', path: rel.slice(0, 4096), room_path: dir === '.' ? '' : dir, reason });
    this.usage.addFileTouched(rel);
    if (reason === 'write') this.markDiffDirty();
    if (source !== 'watcher') this.noteIo();
    return true;
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
    const wasPaused = this.state === 'PAUSED_BY_HUMAN';
    if (canTransition(this.state, 'STOPPING')) this.transition('STOPPING', reason);
    this.clearIdleTimer();
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
      // Stopped processes only act on SIGTERM/SIGHUP once continued (the signals stay pending).
      if (wasPaused) signalSessionTree(pid, 'SIGCONT', { leaderLast: true });
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
      const what = cmd.checkout.type === 'commit' ? `commit ${cmd.checkout.ref}` : `branch ${cmd.checkout.ref}`;
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
      // A patrol is the runner's own command: no agent hooks, shims or policy prompts.
      this.hookChannel = cmd.patrol ? null : this.openHooks(provider.id, this.worktree.path);
      const namespace = deps.guardNamespace === true;
      if (this.policy.network === 'restricted' && !namespace) {
        throw new Error('network mode "restricted" needs a network namespace, which this runner cannot create (it must run as root on Linux); refusing to start');
      }
      // The guard shims go first on PATH (and over the real binaries in the namespace).
      const shims = this.hookChannel
        ? await writeShims({ home: this.home, endpoint: this.hookChannel.endpoint, policy: this.policy, pathDirs: env.PATH.split(':'), namespace })
        : null;
      if (shims) env.PATH = `${shims.binDir}:${env.PATH}`;
      const policyBash = shims && (this.policy.denylist.length > 0 || this.policy.allowlist.size > 0) ? path.join(this.home, '.agent-village', 'policy.bash') : null;
      if (policyBash && shims) {
        await fs.promises.writeFile(policyBash, renderPolicyBash(this.policy, shims.configPath), { mode: 0o644 });
        // Every non-interactive bash the session starts (bash -c, scripts, agents' tools) sources it too.
        env.BASH_ENV = policyBash;
      }
      const launchCtx = { session_id: cmd.session_id, home: this.home, cwd, worktree_path: this.worktree.path, env, command: cmd, hook: this.hookChannel?.endpoint, secrets: cmd.secrets };
      let launch;
      if (cmd.patrol) {
        launch = await preparePatrolLaunch(cmd.patrol, this.home, env);
      } else {
        await provider.prepare?.(launchCtx);
        // After the provider's own .bashrc part, so the check wraps its preexec hook.
        if (policyBash) await fs.promises.appendFile(path.join(this.home, '.bashrc'), `\nsource ${JSON.stringify(policyBash)}\n`);
        launch = provider.launch(launchCtx);
      }
      // Watching starts before the process, so not even its first write goes unseen.
      this.startWatching();
      const readOnly = cmd.mode === 'read_only' && deps.readOnlyPrevention === true;
      const forbidden = namespace && this.paths.active && cmd.mode === 'write' ? await this.forbiddenFiles(this.worktree.path) : [];
      const sandboxed = namespace && (shims !== null || forbidden.length > 0 || this.policy.network === 'restricted' || readOnly);
      const exec = sandboxed
        ? sandboxLaunch(
            {
              binds: shims?.binds ?? [],
              readOnly: [...(readOnly ? [this.worktree.path] : []), ...forbidden],
              isolateNet: this.policy.network === 'restricted',
              // Writes outside the workspace are prevented: the worktree and the clone it commits
              // into (not for read-only sessions), the session's HOME and the usual scratch space.
              writable: [...(readOnly ? [] : [this.worktree.path, deps.workspaces.barePath(cmd.repo_id)]), this.home, ...SCRATCH_DIRS],
              cwd,
            },
            launch.file,
            launch.args,
          )
        : readOnly
          ? readOnlyLaunch(this.worktree.path, cwd, launch.file, launch.args)
          : { file: launch.file, args: launch.args };
      const pty = spawn(exec.file, exec.args, { name: 'xterm-256color', cols: cmd.cols, rows: cmd.rows, cwd, env: launch.env });
      this.pty = pty;
      this.pid = pty.pid;
      pty.onData((data) => {
        this.batcher.push(data);
        this.patrolOutput?.append(data);
        this.hookChannel?.observeOutput(data);
        this.noteIo();
      });
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
      this.transition('RUNNING', cmd.patrol ? `${cmd.patrol.kind} patrol running as pid ${pty.pid}: ${cmd.patrol.command}`.slice(0, 2000) : `${provider.id} running as pid ${pty.pid}`);
      if (cmd.patrol) {
        const { kind, command, timeout_ms } = cmd.patrol;
        if (kind === 'test') this.emit({ type: 'TEST_RUN_STARTED', command: command.slice(0, 4096) });
        this.patrolTimer = setTimeout(() => this.stop(`the patrol timed out after ${describeDuration(timeout_ms)}`), timeout_ms);
        this.patrolTimer.unref();
      }
      this.startUsage();
      // A shell has no prompts to count: its start is its one invocation. AI CLIs count their turns (hooks).
      if (provider.id === 'shell') this.usage.addInvocation();
      this.lastIoAt = Date.now();
      this.scheduleIdle();
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
    this.clearIdleTimer();
    this.batcher.flush();
    this.flushRedactor();
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
    if (this.cmd.patrol && this.worktree) {
      const events = await patrolResultEvents(
        this.cmd.patrol,
        { exitCode: signalName ? null : exitCode, signal: signalName, stoppedBecause: this.stopReason },
        this.patrolOutput?.value ?? '',
        this.worktree,
        this.createdAt,
      ).catch((err) => {
        this.deps.log.error(`patrol result of ${this.id} failed`, err);
        return [patrolErrorEvent(this.cmd.patrol!, `the runner could not read its result: ${errorMessage(err)}`, this.worktree?.sha ?? null, this.createdAt)];
      });
      for (const e of events) this.emit(e);
    }
    await this.cleanup();
    this.finish(to, reason, signalName ? null : exitCode);
  }

  /** Hook calls become events through the same paths the watcher and idle detection use. */
  private openHooks(provider: ProviderId, worktree: string): SessionHooks | null {
    if (!this.deps.hooks) return null;
    return new SessionHooks(this.deps.hooks, this.id, {
      provider,
      worktree,
      gate: this.gate,
      ...(this.cmd.policy?.strict_tools ? { strictTools: strictToolsFor(worktree) } : {}),
      guard: (call) => this.gate.guardCall(call),
      dta: (call) => runSessionDta(call, { worktree, emit: (body) => void this.emit(body), ask: (req) => this.broker.ask(req) }),
      sink: {
        emit: (body) => void this.emit(body),
        activity: (activity, detail) => void this.setActivity(activity, detail),
        fileTouched: (file, reason) => void this.noteFileTouched(file, reason, 'hook'),
        invocation: () => this.usage.addInvocation(),
      },
    });
  }

  private async finishWithoutProcess(to: SessionState, reason: string): Promise<void> {
    if (this.finished) return;
    if (this.cmd.patrol) this.emit(patrolErrorEvent(this.cmd.patrol, reason, this.worktree?.sha ?? null, this.createdAt));
    await this.cleanup();
    this.finish(to, reason, null);
  }

  private async cleanup(): Promise<void> {
    if (this.patrolTimer) clearTimeout(this.patrolTimer);
    this.patrolTimer = null;
    // Whatever still waits is denied (its shim died with the process); then the token dies too.
    this.broker.closeAll('session_ended');
    // The token dies with the process: a late hook call gets 401, never an event after the end.
    this.hookChannel?.close();
    this.stopUsageTimer();
    this.clearIdleTimer();
    // The final DIFF_SUMMARY needs the worktree, so it comes before the removal.
    await this.finalDiff().catch((err) => this.deps.log.error(`final diff of ${this.id} failed`, err));
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

  /**
   * Spooling must never throw into a PTY callback; a failure here is logged loudly. Nothing
   * leaves the runner unmasked: terminal chunks went through the stream redactor already; every
   * other event has its strings masked here (ids, hashes and enum fields kept as they are).
   */
  private emit(body: RunnerEventBody): number | null {
    try {
      const safe = body.type === 'TERMINAL_CHUNK' ? body : redactStrings(body, this.redactor, isKeptField);
      return this.deps.spool.append(this.base, safe)?.seq ?? null;
    } catch (err) {
      this.deps.log.error(`could not spool ${body.type} for ${this.id}`, err);
      return null;
    }
  }

  /**
   * PTY output → masked output. The redactor may hold back a short tail that could still become a
   * secret; it is released after REDACT_QUIET_FLUSH_MS without more output (a secret split by a
   * longer pause is not caught: README, "Secrets and redaction").
   */
  private emitRedacted(data: string): void {
    const out = this.streamRedactor.push(data);
    if (out) this.emitChunk(out);
    if (this.streamRedactor.pending > 0) {
      if (!this.redactFlushTimer) this.redactFlushTimer = setTimeout(() => this.flushRedactor(), REDACT_QUIET_FLUSH_MS);
    } else if (this.redactFlushTimer) {
      clearTimeout(this.redactFlushTimer);
      this.redactFlushTimer = null;
    }
  }

  private flushRedactor(): void {
    if (this.redactFlushTimer) clearTimeout(this.redactFlushTimer);
    this.redactFlushTimer = null;
    const rest = this.streamRedactor.flush();
    if (rest) this.emitChunk(rest);
  }

  private emitChunk(data: string): void {
    const seq = this.emit({ type: 'TERMINAL_CHUNK', data });
    this.usage.addOutput(Buffer.byteLength(data));
    if (seq !== null) this.flow.chunkSent(seq, data.length);
  }

  // ---- activity (idle detection) ----

  /** PTY output or input: the agent is not idle. Cheap; called for every chunk. */
  private noteIo(): void {
    this.lastIoAt = Date.now();
    if (this.activity === 'idle') this.setActivity('working', 'output or input again');
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** One timer per session, not one per chunk: it fires when idleness could begin and looks at lastIoAt. */
  private scheduleIdle(): void {
    this.clearIdleTimer();
    if (this.finished || this.exited || this.state !== 'RUNNING' || this.activity === 'idle') return;
    const idleMs = this.deps.idleAfterMs ?? IDLE_AFTER_MS;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.finished || this.exited || this.state !== 'RUNNING') return;
      if (Date.now() - this.lastIoAt < idleMs) return this.scheduleIdle();
      // An agent that said it waits for input says more than "idle"; keep that.
      if (this.activity === 'waiting_for_input') return;
      this.setActivity('idle', `no output or input for ${describeDuration(idleMs)}`, this.lastIoAt);
    }, Math.max(0, this.lastIoAt + idleMs - Date.now()));
    this.idleTimer.unref();
  }

  // ---- files: watcher, read-only guard, diff summary ----

  private startWatching(): void {
    if (!this.worktree || this.watcher) return;
    this.watcher = new WorktreeWatcher(this.worktree.path, (changes) => this.onWatchChanges(changes), this.deps.log, this.deps.watchDebounceMs);
    this.watcher.start();
  }

  private onWatchChanges(changes: WatchChange[]): void {
    if (this.finished) return;
    if (this.cmd.mode === 'read_only') return this.revertWrites(changes);
    const guarded = this.paths.active ? changes.filter((c) => this.paths.violation(c.path) !== null) : [];
    if (guarded.length) this.revertForbidden(guarded);
    for (const c of changes) if (!isIgnoredPath(c.path) && !guarded.includes(c)) this.noteFileTouched(c.path, 'write', 'watcher');
    this.markDiffDirty();
  }

  /** Tracked files the path guard protects: bind-mounted read-only in the namespace (prevention). */
  private async forbiddenFiles(worktree: string): Promise<string[]> {
    const listing = await git(['ls-files', '-z'], { cwd: worktree, what: 'ls-files' }).catch(() => '');
    return protectedFiles(worktree, listing.split('\0').filter(Boolean), (rel) => this.paths.violation(rel) !== null);
  }

  /** Detect-and-revert for path guards where prevention was not possible (new files, no namespace). */
  private revertForbidden(changes: WatchChange[]): void {
    const wt = this.worktree;
    if (!wt) return;
    this.reverts = this.reverts.then(async () => {
      for (const c of changes) {
        const rule = this.paths.violation(c.path) ?? 'path guard';
        try {
          if (!(await revertPath(wt.path, wt.sha, c.path))) continue;
          this.deps.log.warn(`session ${this.id}: write to ${c.path} broke ${rule}; reverted`);
          this.emit({ type: 'POLICY_BLOCKED', path: c.path.slice(0, 4096), rule, detail: `write to ${c.path} reverted to the base commit`, outcome: 'reverted' });
        } catch (err) {
          this.emit({ type: 'ALERT_RAISED', severity: 'error', message: `write to ${c.path} broke ${rule}; could not revert it: ${errorMessage(err)}`.slice(0, 4000) });
        }
      }
    });
  }

  /** Detect-and-revert for read-only sessions (the fallback where the read-only mount is not possible). */
  private revertWrites(changes: WatchChange[]): void {
    const wt = this.worktree;
    if (!wt) return;
    this.reverts = this.reverts.then(async () => {
      for (const c of changes) {
        const dir = path.posix.dirname(c.path);
        const room_path = dir === '.' ? '' : dir;
        try {
          if (!(await revertPath(wt.path, wt.sha, c.path))) continue;
          this.deps.log.warn(`session ${this.id}: read-only session wrote ${c.path}; reverted`);
          this.emit({ type: 'ALERT_RAISED', severity: 'warning', message: `read-only session wrote ${c.path}; reverted`.slice(0, 4000), room_path });
        } catch (err) {
          this.emit({
            type: 'ALERT_RAISED',
            severity: 'error',
            message: `read-only session wrote ${c.path}; could not revert it: ${errorMessage(err)}`.slice(0, 4000),
            room_path,
          });
        }
      }
    });
  }

  private markDiffDirty(): void {
    this.diffDirty = true;
    if (this.diffClosed || this.diffTimer || this.diffRunning) return;
    const interval = this.deps.diffIntervalMs ?? DIFF_MIN_INTERVAL_MS;
    this.diffTimer = setTimeout(
      () => {
        this.diffTimer = null;
        this.runDiff();
      },
      Math.max(0, this.lastDiffAt + interval - Date.now()),
    );
  }

  private runDiff(): void {
    const wt = this.worktree;
    if (!wt || this.diffClosed) return;
    this.diffDirty = false;
    this.lastDiffAt = Date.now();
    this.diffRunning = computeDiff(wt.path, wt.sha)
      .then((files) => {
        const json = JSON.stringify(files);
        if (this.diffClosed || json === this.lastDiff) return;
        this.lastDiff = json;
        this.emit({ type: 'DIFF_SUMMARY', files, final: false });
      })
      .catch((err) => this.deps.log.warn(`diff of ${this.id} failed: ${errorMessage(err)}`))
      .finally(() => {
        this.diffRunning = null;
        if (this.diffDirty) this.markDiffDirty();
      });
  }

  /** Last changes seen, then one DIFF_SUMMARY with final=true (only for a session whose process ran). */
  private async finalDiff(): Promise<void> {
    if (this.watcher) await new Promise((r) => setTimeout(r, FINAL_WATCH_SETTLE_MS));
    this.watcher?.flushNow();
    this.watcher?.close();
    this.watcher = null;
    this.diffClosed = true;
    if (this.diffTimer) clearTimeout(this.diffTimer);
    this.diffTimer = null;
    await this.diffRunning;
    await this.reverts;
    const wt = this.worktree;
    if (!wt || this.pid === null || !fs.existsSync(wt.path)) return;
    const files = await computeDiff(wt.path, wt.sha);
    this.lastDiff = JSON.stringify(files);
    this.emit({ type: 'DIFF_SUMMARY', files, final: true });
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
        units: {
          agent_seconds: w.agent_seconds,
          terminal_kb: w.terminal_kb,
          files_touched: w.files_touched,
          provider_invocations: w.provider_invocations,
        },
      });
    }
  }

  private stopUsageTimer(): void {
    if (this.usageTimer) clearTimeout(this.usageTimer);
    this.usageTimer = null;
  }

  /** True while USAGE_TICKs are scheduled; false once the session ended. */
  get usageTicking(): boolean {
    return this.usageTimer !== null;
  }

  /** The partial last window is billed too. */
  private stopUsage(now: number): void {
    this.stopUsageTimer();
    this.emitUsage(this.usage.finish(now));
  }
}
