import fs from 'node:fs';
import {
  canTransition,
  fail,
  ok,
  type CreateSessionCommand,
  type DeliverRunResultCommand,
  type ProviderId,
  type Result,
  type RunnerEventBody,
  type SessionState,
  WIRE_LIMITS,
} from '../../protocol';
import { SessionHooks, type HookServer } from '../hooks';
import { errorMessage, type Logger } from '../log';
import { ScreenWatch, type ProviderAdapter, type ScreenGate } from '../providers';
import { DEFAULT_WATERMARKS, FlowControl } from '../pty/flow-control';
import type { PendingEvent, SessionBase, Spool } from '../spool/spool';
import type { PreparedWorktree, WorkspaceManager } from '../workspace/workspace-manager';
import { ApprovalBroker } from '../approvals/broker';
import { PolicyGate } from '../approvals/gate';
import type { ApprovalJournal } from '../approvals/journal';
import { effectivePolicy, type EffectivePolicy } from '../policy/classify';
import { pathGuard, type PathGuard } from '../policy/paths';
import { logRedaction } from '../../common/log-redaction';
import { createRedactor, createStreamRedactor, DEFAULT_RULES, RedactionTally, redactStrings, type Redactor } from '../../common/redact';
import { PatrolOutput, patrolErrorEvent } from '../patrols/patrol-run';
import { ActivityTracker, IDLE_AFTER_MS, type ActivityKind } from './activity-tracker';
import { DiffReporter, type FileTouchReason } from './diff-reporter';
import type { LaunchPlan } from './launch-plan';
import { ProcessControl, STOP_GRACE_MS } from './process-control';
import { chunkLimitFor, TerminalOutput } from './terminal-output';
import { echoTrace } from './echo-trace';
import type { TypingWatch } from './typing-watch';
import { runResultEvent, runResultNotice, writeRunResult } from './run-inbox';
import { UsageTicker } from './usage-ticker';
import { runSession } from './session-launch';
import type { EgressProxy, SandboxSupport } from '../sandbox';

export { STOP_GRACE_MS } from './process-control';
export { IDLE_AFTER_MS, type ActivityKind } from './activity-tracker';
export { DIFF_MIN_INTERVAL_MS, FILE_TOUCHED_DEDUPE_MS, type FileTouchReason } from './diff-reporter';

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
  /** Tests shorten these; production uses the constants of activity-tracker.ts and diff-reporter.ts. */
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
  /**
   * bubblewrap is usable here (runner/sandbox, probed once at start): every session runs in its
   * own namespaces with the runner's data hidden and egress through the filtering proxy. Takes
   * precedence over guardNamespace / readOnlyPrevention.
   */
  sandbox?: SandboxSupport;
  /** Who typed on this runner lately: a busy session's flow-control window shrinks while another is typed into. */
  typing?: TypingWatch;
}

/** Event fields that are identifiers or enums, never free text: not passed through the redactor. */
const KEPT_FIELDS = new Set(['type', 'session_id', 'org_id', 'repo_id', 'approval_id', 'command_hash', 'provider', 'category', 'risk', 'decision', 'from', 'to', 'outcome', 'source', 'activity', 'severity']);
const isKeptField = (key: string) => KEPT_FIELDS.has(key);

/**
 * One session: the state machine and the wiring of its parts — launch plan (launch-plan.ts),
 * process control (process-control.ts), activity (activity-tracker.ts), files and diffs
 * (diff-reporter.ts), usage (usage-ticker.ts), the run inbox (run-inbox.ts). States only move
 * forward (protocol canTransition); the last event is always COMPLETED or FAILED. Its launch and
 * exit live in session-launch.ts and drive its parts directly: the members they use are not
 * `private`, but nothing outside runner/sessions/ reaches them.
 */
export class Session {
  readonly id: string;
  readonly base: SessionBase;
  state: SessionState = 'CREATED';
  worktree: PreparedWorktree | null = null;
  home: string | null = null;
  readonly flow: FlowControl;
  /** Resolves after the final state change was spooled and everything was cleaned up. */
  readonly done: Promise<void>;

  readonly proc: ProcessControl;
  stopReason: string | null = null;
  /** The terminal stream: batched, masked before it is spooled (a secret split across chunks is held briefly). */
  readonly output: TerminalOutput;
  /** Every other event's strings, masked before they are spooled. */
  private readonly redactor: Redactor;
  /** What this session's redaction masked (rule and secret names only): sent as REDACTION_RECEIPT at the end. */
  private readonly redactions = new RedactionTally();
  private resolveDone!: () => void;
  finished = false;

  readonly usage: UsageTicker;
  readonly activity: ActivityTracker;
  readonly files: DiffReporter;
  /** The agent CLI's screen: gates its hooks cannot report, and the line to quote when it exits early. */
  screen: ScreenWatch | null = null;
  /** The gate the screen showed last (its detail is the current activity's). */
  screenGate: ScreenGate | null = null;
  hookChannel: SessionHooks | null = null;
  /** The session's only way out under restricted network (sandbox only). */
  egress: EgressProxy | null = null;

  /** Set for a patrol (cmd.patrol): its output is kept and read for findings when it ends. */
  readonly patrolOutput: PatrolOutput | null;
  patrolTimer: NodeJS.Timeout | null = null;
  readonly createdAt = Date.now();

  /** Policy as enforced here (defaults filled in), the one ask path, and the checks that use it. */
  readonly policy: EffectivePolicy;
  readonly broker: ApprovalBroker;
  readonly gate: PolicyGate;
  readonly paths: PathGuard;
  /** What was spawned (tests and the sandbox read it). */
  launchPlan: LaunchPlan | null = null;

  constructor(
    readonly cmd: CreateSessionCommand,
    readonly deps: SessionDeps,
  ) {
    this.id = cmd.session_id;
    this.base = { session_id: cmd.session_id, org_id: cmd.org_id, repo_id: cmd.repo_id, repo_ref: cmd.repo };
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const providerSecrets = cmd.patrol ? [] : (deps.providers.get(cmd.provider)?.secretValues?.() ?? []);
    const secretValues = [...Object.values(cmd.secrets ?? {}), ...providerSecrets];
    logRedaction.remember(secretValues);
    // No timer ever releases held text (issue 10): it leaves when the next bytes decide it, or at end().
    // The runner user's shared sign-in (--provider-auth) is masked like the org's secrets, under its provider's name.
    const named: Record<string, string> = { ...(cmd.secrets ?? {}) };
    providerSecrets.forEach((v, i) => (named[`${cmd.provider}_sign_in_${i + 1}`] = v));
    this.redactor = createRedactor(named);
    this.output = new TerminalOutput(createStreamRedactor(DEFAULT_RULES, named, { onMask: this.redactions.note }), {
      chunk: (data) => {
        const record = this.spool({ type: 'TERMINAL_CHUNK', data });
        echoTrace?.chunk(this.id, record?.event.seq ?? null);
        return record ? { seq: record.event.seq, bytes: record.utf8?.byteLength ?? Buffer.byteLength(data) } : null;
      },
      sent: (chunk, data) => {
        this.usage.meter.addOutput(chunk?.bytes ?? Buffer.byteLength(data));
        if (chunk) this.flow.chunkSent(chunk.seq, data.length);
      },
    }, chunkLimitFor(() => this.flow.window));
    this.proc = new ProcessControl(cmd.session_id, deps.log, deps.stopGraceMs ?? STOP_GRACE_MS);
    const typing = deps.typing;
    this.flow = new FlowControl(
      () => {
        this.proc.pauseReading();
        this.output.readingPaused();
      },
      () => {
        this.proc.resumeReading();
        this.output.readingResumed();
      },
      typing ? () => typing.watermarks(this.id, DEFAULT_WATERMARKS) : DEFAULT_WATERMARKS,
    );
    this.patrolOutput = cmd.patrol ? new PatrolOutput() : null;
    this.policy = effectivePolicy(cmd.policy);
    this.paths = pathGuard(this.policy);
    const emit = (body: RunnerEventBody) => void this.emit(body);
    this.usage = new UsageTicker(cmd.provider, emit);
    this.activity = new ActivityTracker({
      idleAfterMs: deps.idleAfterMs ?? IDLE_AFTER_MS,
      emit,
      live: () => !this.finished && !this.proc.exited,
      running: () => this.state === 'RUNNING',
    });
    this.files = new DiffReporter({
      worktree: () => this.worktree,
      readOnly: cmd.mode === 'read_only',
      paths: this.paths,
      emit,
      log: deps.log,
      sessionId: cmd.session_id,
      finished: () => this.finished,
      counted: (rel) => this.usage.meter.addFileTouched(rel),
      activity: () => this.activity.noteIo(),
      diffIntervalMs: deps.diffIntervalMs,
      fileTouchedDedupeMs: deps.fileTouchedDedupeMs,
      watchDebounceMs: deps.watchDebounceMs,
      strictTools: cmd.policy?.strict_tools === true,
    });
    this.broker = new ApprovalBroker(
      cmd.session_id,
      { emit, waiting: (w) => this.onApprovalWaiting(w) },
      this.policy.approvalTimeoutMs,
      deps.approvalJournal ?? null,
    );
    this.gate = new PolicyGate({ policy: this.policy, broker: this.broker, emit, secrets: cmd.secrets ?? {} });
  }

  /** The PTY process id once it was spawned (kept after it exits). */
  get pid(): number | null {
    return this.proc.pid;
  }

  /** session:approve: only the pending request with this id AND command hash is decided. */
  approve(input: { approval_id: string; command_hash: string; decision: 'allow' | 'deny'; note?: string; decided_by: string }): Result<null> {
    return this.broker.decide(input);
  }

  /** A deterministic run started with this session as its parent finished (run-inbox.ts). */
  async deliverRunResult(cmd: DeliverRunResultCommand): Promise<Result<{ inbox_path: string | null }>> {
    if (this.finished) return fail('CONFLICT', `session ${this.id} has ended`);
    let inboxPath: string | null = null;
    if (this.home) {
      try {
        inboxPath = await writeRunResult(this.home, cmd);
      } catch (err) {
        this.deps.log.warn(`session ${this.id}: could not write the result of ${cmd.run_id} to the inbox: ${errorMessage(err)}`);
      }
    }
    if (this.finished) return fail('CONFLICT', `session ${this.id} has ended`);
    this.emit(runResultEvent(cmd, inboxPath));
    this.hookChannel?.notify(runResultNotice(cmd, inboxPath));
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
    return this.proc.alive;
  }

  start(): void {
    void runSession(this).catch((err) => {
      this.deps.log.error(`session ${this.id} crashed`, err);
      void this.finishWithoutProcess('FAILED', `runner error: ${errorMessage(err)}`);
    });
  }

  input(data: string, mode: 'raw' | 'line'): Result<null> {
    if (this.cmd.patrol) return fail('CONFLICT', 'a patrol runs on its own and takes no input');
    if (!this.alive) return fail('CONFLICT', `session ${this.id} is not running (${this.state})`);
    // A stopped process reads nothing; keystrokes would pile up and all arrive at resume.
    if (this.state === 'PAUSED_BY_HUMAN') return fail('CONFLICT', `session ${this.id} is paused; resume it first`);
    this.output.inputWritten();
    this.deps.typing?.keyTyped(this.id);
    this.proc.write(mode === 'line' ? `${data}\r` : data);
    echoTrace?.written(this.id);
    this.activity.noteIo();
    return ok(null);
  }

  /** SIGSTOP to every process of the session; usage and idle detection stop counting. */
  pause(reason = 'paused from the control plane'): Result<null> {
    if (this.state !== 'RUNNING' || !this.alive || this.pid === null) {
      return fail('CONFLICT', `session ${this.id} cannot be paused: it is ${this.state}`);
    }
    this.proc.pause();
    this.transition('PAUSED_BY_HUMAN', reason);
    this.usage.pause();
    this.activity.clear();
    return ok(null);
  }

  /** SIGCONT, jobs before their shell; back to RUNNING. */
  resume(reason = 'resumed from the control plane'): Result<null> {
    if (this.state !== 'PAUSED_BY_HUMAN' || !this.alive || this.pid === null) {
      return fail('CONFLICT', `session ${this.id} is not paused (it is ${this.state})`);
    }
    this.proc.resume();
    this.transition('RUNNING', reason);
    this.usage.resume();
    this.activity.restart();
    return ok(null);
  }

  /** What the agent is doing, as last reported (null before anything said so). */
  get currentActivity(): ActivityKind | null {
    return this.activity.current;
  }

  /**
   * The one way to report AGENT_ACTIVITY (provider hooks and the runner's idle detection both
   * use it): emits only when the activity changes. Returns whether it emitted.
   */
  setActivity(activity: ActivityKind, detail: string, since = Date.now()): boolean {
    return this.activity.set(activity, detail, since);
  }

  /** The one way to report FILE_TOUCHED (diff-reporter.ts). Returns whether it emitted. */
  noteFileTouched(file: string, reason: FileTouchReason, source: string): boolean {
    return this.files.noteFileTouched(file, reason, source);
  }

  resize(cols: number, rows: number): Result<null> {
    if (!this.alive) return fail('CONFLICT', `session ${this.id} is not running (${this.state})`);
    this.proc.resize(cols, rows);
    this.screen?.resize(cols, rows);
    return ok(null);
  }

  terminalAck(seq: number): void {
    this.flow.ack(seq);
  }

  /** The connection to the control plane was (re)made: acks lost on the old one cannot hold the PTY (flow-control.ts). */
  releaseFlowControl(): void {
    this.flow.release();
  }

  /** Idempotent. Before the process exists, the start-up notices and ends the session itself. */
  stop(reason: string): void {
    // Once the process has exited, its own exit decides the final state.
    if (this.finished || this.proc.exited || this.stopReason !== null) return;
    this.stopReason = reason;
    const wasPaused = this.state === 'PAUSED_BY_HUMAN';
    if (canTransition(this.state, 'STOPPING')) this.transition('STOPPING', reason);
    this.activity.clear();
    if (this.alive) {
      // Whatever the program prints while dying must still be read, or its exit would hang.
      this.flow.forceResume();
      this.proc.terminate(wasPaused);
    }
  }

  /** True while USAGE_TICKs are scheduled; false once the session ended. */
  get usageTicking(): boolean {
    return this.usage.ticking;
  }

  // ---- lifecycle ----

  async finishWithoutProcess(to: SessionState, reason: string): Promise<void> {
    if (this.finished) return;
    if (this.cmd.patrol) this.emit(patrolErrorEvent(this.cmd.patrol, reason, this.worktree?.sha ?? null, this.createdAt));
    await this.cleanup();
    this.finish(to, reason, null);
  }

  async cleanup(): Promise<void> {
    if (this.patrolTimer) clearTimeout(this.patrolTimer);
    this.patrolTimer = null;
    // Whatever still waits is denied (its shim died with the process); then the token dies too.
    this.broker.closeAll('session_ended');
    // The token dies with the process: a late hook call gets 401, never an event after the end.
    this.hookChannel?.close();
    await this.egress?.close().catch((err) => this.deps.log.error(`could not close the egress proxy of ${this.id}`, err));
    this.egress = null;
    this.usage.stopTimer();
    this.activity.clear();
    this.screen?.close();
    // The final DIFF_SUMMARY needs the worktree, so it comes before the removal.
    await this.files.finalDiff(this.pid !== null).catch((err) => this.deps.log.error(`final diff of ${this.id} failed`, err));
    const { workspaces, log } = this.deps;
    if (this.worktree || fs.existsSync(workspaces.worktreePath(this.id))) {
      await workspaces.removeWorktree(this.id).catch((err) => log.error(`could not remove the worktree of ${this.id}`, err));
    }
    if (this.home) {
      await fs.promises.rm(this.home, { recursive: true, force: true }).catch((err) => log.error(`could not remove the home of ${this.id}`, err));
    }
  }

  finish(to: SessionState, reason: string, exitCode: number | null): void {
    if (this.finished) return;
    if (!canTransition(this.state, to)) to = canTransition(this.state, 'FAILED') ? 'FAILED' : to;
    if (this.redactions.size > 0) this.emit({ type: 'REDACTION_RECEIPT', entries: this.redactions.list() });
    this.transition(to, reason, exitCode);
    this.finished = true;
    this.proc.release();
    this.resolveDone();
  }

  /** Last resort when exit handling itself broke: the session must still end. */
  endNow(): void {
    this.finish('FAILED', 'runner error while the session ended', null);
  }

  transition(to: SessionState, reason: string, exitCode?: number | null): void {
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
      reason: reason.slice(0, WIRE_LIMITS.TEXT),
      ...(exitCode !== undefined ? { exit_code: exitCode } : {}),
    });
  }

  /**
   * Spooling must never throw into a PTY callback; a failure here is logged loudly. Nothing
   * leaves the runner unmasked: terminal chunks went through the stream redactor already; every
   * other event has its strings masked here (ids, hashes and enum fields kept as they are).
   */
  emit(body: RunnerEventBody): number | null {
    return this.spool(body)?.event.seq ?? null;
  }

  /** emit(), returning the spooled record (a chunk's UTF-8 beside its event). */
  private spool(body: RunnerEventBody): PendingEvent | null {
    try {
      const safe = body.type === 'TERMINAL_CHUNK' || body.type === 'REDACTION_RECEIPT' ? body : redactStrings(body, this.redactor, isKeptField, this.redactions.note);
      const record = this.deps.spool.appendRecord(this.base, safe);
      this.redactions.settle(record?.event.seq ?? 0);
      return record;
    } catch (err) {
      this.deps.log.error(`could not spool ${body.type} for ${this.id}`, err);
      return null;
    }
  }
}
