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
import { createSessionHome } from '../pty/clean-env';
import { FlowControl } from '../pty/flow-control';
import type { SessionBase, Spool } from '../spool/spool';
import type { PreparedWorktree, WorkspaceManager } from '../workspace/workspace-manager';
import { ApprovalBroker } from '../approvals/broker';
import { PolicyGate } from '../approvals/gate';
import type { ApprovalJournal } from '../approvals/journal';
import { effectivePolicy, type EffectivePolicy } from '../policy/classify';
import { pathGuard, type PathGuard } from '../policy/paths';
import { runSessionDta } from '../dta/session-dta';
import { strictToolsFor } from '../dta/strict-tools';
import { logRedaction } from '../../common/log-redaction';
import { createRedactor, createStreamRedactor, DEFAULT_RULES, RedactionTally, redactStrings, type Redactor } from '../../common/redact';
import { PatrolOutput, patrolErrorEvent, patrolResultEvents } from '../patrols/patrol-run';
import { ActivityTracker, describeDuration, IDLE_AFTER_MS, type ActivityKind } from './activity-tracker';
import { DiffReporter, type FileTouchReason } from './diff-reporter';
import { prepareLaunch, spawnOf, type LaunchPlan, type LaunchPrep } from './launch-plan';
import { ProcessControl, signalName, STOP_GRACE_MS } from './process-control';
import { TerminalOutput } from './terminal-output';
import { runResultEvent, runResultNotice, writeRunResult } from './run-inbox';
import { UsageTicker } from './usage-ticker';
import { EgressProxy, type EgressBlocked, type SandboxSupport } from '../sandbox';

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
}

/** Exit codes above this mean "killed by signal (code - 128)" when they come from bubblewrap's init. */
const SHELL_SIGNAL_BASE = 128;
/** Highest Linux signal number (SIGRTMAX). */
const MAX_SIGNAL = 64;

/** Event fields that are identifiers or enums, never free text: not passed through the redactor. */
const KEPT_FIELDS = new Set(['type', 'session_id', 'org_id', 'repo_id', 'approval_id', 'command_hash', 'provider', 'category', 'risk', 'decision', 'from', 'to', 'outcome', 'source', 'activity', 'severity']);
const isKeptField = (key: string) => KEPT_FIELDS.has(key);

/**
 * One session: the state machine and the wiring of its parts — launch plan (launch-plan.ts),
 * process control (process-control.ts), activity (activity-tracker.ts), files and diffs
 * (diff-reporter.ts), usage (usage-ticker.ts), the run inbox (run-inbox.ts). States only move
 * forward (protocol canTransition); the last event is always COMPLETED or FAILED.
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

  private readonly proc: ProcessControl;
  private stopReason: string | null = null;
  /** The terminal stream: batched, masked before it is spooled (a secret split across chunks is held briefly). */
  private readonly output: TerminalOutput;
  /** Every other event's strings, masked before they are spooled. */
  private readonly redactor: Redactor;
  /** What this session's redaction masked (rule and secret names only): sent as REDACTION_RECEIPT at the end. */
  private readonly redactions = new RedactionTally();
  private resolveDone!: () => void;
  private finished = false;

  private readonly usage: UsageTicker;
  private readonly activity: ActivityTracker;
  private readonly files: DiffReporter;
  /** The agent CLI's screen: gates its hooks cannot report, and the line to quote when it exits early. */
  private screen: ScreenWatch | null = null;
  /** The gate the screen showed last (its detail is the current activity's). */
  private screenGate: ScreenGate | null = null;
  private hookChannel: SessionHooks | null = null;
  /** The session's only way out under restricted network (sandbox only). */
  private egress: EgressProxy | null = null;

  /** Set for a patrol (cmd.patrol): its output is kept and read for findings when it ends. */
  private readonly patrolOutput: PatrolOutput | null;
  private patrolTimer: NodeJS.Timeout | null = null;
  private readonly createdAt = Date.now();

  /** Policy as enforced here (defaults filled in), the one ask path, and the checks that use it. */
  readonly policy: EffectivePolicy;
  readonly broker: ApprovalBroker;
  private readonly gate: PolicyGate;
  private readonly paths: PathGuard;
  /** What was spawned (tests and the sandbox read it). */
  launchPlan: LaunchPlan | null = null;

  constructor(
    readonly cmd: CreateSessionCommand,
    private readonly deps: SessionDeps,
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
      chunk: (data) => this.emit({ type: 'TERMINAL_CHUNK', data }),
      sent: (seq, data) => {
        this.usage.meter.addOutput(Buffer.byteLength(data));
        if (seq !== null) this.flow.chunkSent(seq, data.length);
      },
    });
    this.proc = new ProcessControl(cmd.session_id, deps.log, deps.stopGraceMs ?? STOP_GRACE_MS);
    this.flow = new FlowControl(
      () => this.proc.pauseReading(),
      () => this.proc.resumeReading(),
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
    void this.run().catch((err) => {
      this.deps.log.error(`session ${this.id} crashed`, err);
      void this.finishWithoutProcess('FAILED', `runner error: ${errorMessage(err)}`);
    });
  }

  input(data: string, mode: 'raw' | 'line'): Result<null> {
    if (this.cmd.patrol) return fail('CONFLICT', 'a patrol runs on its own and takes no input');
    if (!this.alive) return fail('CONFLICT', `session ${this.id} is not running (${this.state})`);
    // A stopped process reads nothing; keystrokes would pile up and all arrive at resume.
    if (this.state === 'PAUSED_BY_HUMAN') return fail('CONFLICT', `session ${this.id} is paused; resume it first`);
    this.proc.write(mode === 'line' ? `${data}\r` : data);
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
      const plan = await prepareLaunch(this.launchPrep(), provider, this.worktree, this.home);
      this.launchPlan = plan;
      // Watching starts before the process, so not even its first write goes unseen.
      this.files.startWatching();
      if (!cmd.patrol && provider.screenRules) this.screen = new ScreenWatch(provider.id, provider.screenRules, cmd, (gate) => this.onScreenGate(gate));
      const pid = this.proc.spawn(spawnOf(plan), { cwd: plan.cwd, env: plan.env, ...plan.size, sandboxed: plan.isolation === 'sandbox' }, {
        data: (data) => {
          this.screen?.push(data);
          this.output.push(data);
          this.patrolOutput?.append(data);
          this.hookChannel?.observeOutput(data);
          this.activity.noteIo();
        },
        exit: (exitCode, signal) => {
          void this.onExit(exitCode, signal).catch((err) => {
            this.deps.log.error(`session ${this.id} exit handling failed`, err);
            this.endNow();
          });
        },
      });
      this.emit({
        type: 'SESSION_STARTED',
        provider: provider.id,
        room_path: cmd.room_path,
        branch: this.worktree.branch,
        worktree_path: this.worktree.path,
        pid,
      });
      this.transition('RUNNING', cmd.patrol ? `${cmd.patrol.kind} patrol running as pid ${pid}: ${cmd.patrol.command}`.slice(0, WIRE_LIMITS.TEXT) : `${provider.id} running as pid ${pid}`);
      if (cmd.patrol) {
        const { kind, command, timeout_ms } = cmd.patrol;
        if (kind === 'test') this.emit({ type: 'TEST_RUN_STARTED', command: command.slice(0, WIRE_LIMITS.COMMAND) });
        this.patrolTimer = setTimeout(() => this.stop(`the patrol timed out after ${describeDuration(timeout_ms)}`), timeout_ms);
        this.patrolTimer.unref();
      }
      this.usage.start();
      // A shell has no prompts to count: its start is its one invocation. AI CLIs count their turns (hooks).
      if (provider.id === 'shell') this.usage.meter.addInvocation();
      this.activity.restart();
      deps.log.info(`session ${this.id} running (pid ${pid}) in ${plan.cwd}`);
    } catch (err) {
      const reason = errorMessage(err);
      deps.log.warn(`session ${this.id} failed to start: ${reason}`);
      if (this.proc.alive) {
        // Started but could not be reported: do not leave it running unowned.
        this.proc.killAll();
        return;
      }
      await this.finishWithoutProcess('FAILED', reason);
    }
  }

  /** What launch-plan.ts's prepareLaunch needs; hooks and the egress proxy stay with the session for its cleanup. */
  private launchPrep(): LaunchPrep {
    const { cmd, deps } = this;
    return {
      cmd,
      policy: this.policy,
      paths: this.paths,
      clone: deps.workspaces.barePath(cmd.repo_id),
      can: { readOnlyMount: deps.readOnlyPrevention === true, guardNamespace: deps.guardNamespace === true, sandbox: deps.sandbox ?? null },
      openHooks: (provider, worktree) => (this.hookChannel = this.openHooks(provider, worktree)),
      warnUnsandboxed: () => this.warnUnsandboxed(),
      startEgress: async (allow) => (this.egress = await EgressProxy.start({ allow, log: deps.log, onBlocked: (b) => this.onEgressBlocked(b) })),
    };
  }

  /**
   * Restricted network asked for, but this runner can make no network namespace (no bubblewrap,
   * user namespaces disabled, not root): the session runs with the runner's network, and says so
   * loudly in its terminal and as an alert (README, "Threat model").
   */
  private warnUnsandboxed(): void {
    const msg = 'this runner cannot sandbox sessions (no usable bubblewrap / user namespaces): network egress is NOT restricted for this session';
    this.deps.log.warn(`session ${this.id}: ${msg}`);
    this.emit({ type: 'ALERT_RAISED', severity: 'warning', message: msg });
    this.output.push(`\x1b[1;33magent-village: ${msg}\x1b[0m\r\n`);
  }

  /** A connection the egress proxy refused: a line in the terminal and POLICY_BLOCKED with the host (audited). */
  private onEgressBlocked(b: EgressBlocked): void {
    if (!b.report || this.finished) return;
    const target = `${b.host}:${b.port}`;
    this.deps.log.info(`session ${this.id}: egress to ${target} refused`);
    this.output.push(`\r\n\x1b[1;31magent-village: network: blocked ${target} (not on this session's allowlist)\x1b[0m\r\n`);
    this.emit({
      type: 'POLICY_BLOCKED',
      command: `CONNECT ${target}`.slice(0, WIRE_LIMITS.POLICY_COMMAND),
      host: b.host.slice(0, 300),
      rule: `network allow_hosts does not include ${b.host}`.slice(0, WIRE_LIMITS.RULE),
      detail: `a connection to ${target} was refused by the session's egress proxy`.slice(0, WIRE_LIMITS.TEXT),
      outcome: 'prevented',
    });
  }

  private async onExit(exitCode: number, signal: number): Promise<void> {
    this.activity.clear();
    this.output.end();
    this.usage.finish();
    // Jobs the program left behind must not outlive the worktree they run in.
    this.proc.killAll();
    // bubblewrap's init reports a program killed by signal N as exit code 128 + N (a shell's
    // convention); turn it back into the signal so "killed by SIGKILL" reads the same sandboxed.
    if (this.launchPlan?.isolation === 'sandbox' && !signal && exitCode > SHELL_SIGNAL_BASE && exitCode <= SHELL_SIGNAL_BASE + MAX_SIGNAL) signal = exitCode - SHELL_SIGNAL_BASE;
    const sig = signalName(signal);
    const how = sig ? `killed by ${sig}` : `exited with code ${exitCode}`;
    let to: SessionState;
    let reason: string;
    if (this.stopReason !== null) {
      to = 'COMPLETED';
      reason = `${this.stopReason} (${how})`;
    } else if (!sig && exitCode === 0) {
      to = 'COMPLETED';
      reason = how;
    } else {
      to = 'FAILED';
      // "exited with code 1: Failed to connect to api.anthropic.com: ENOTFOUND" says what to fix.
      const last = await this.screen?.lastLine().catch(() => null);
      reason = last ? `${how}: ${last}` : how;
    }
    this.screen?.close();
    this.deps.log.info(`session ${this.id} ${how}`);
    if (this.cmd.patrol && this.worktree) {
      const events = await patrolResultEvents(
        this.cmd.patrol,
        { exitCode: sig ? null : exitCode, signal: sig, stoppedBecause: this.stopReason },
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
    this.finish(to, reason, sig ? null : exitCode);
  }

  /**
   * The screen shows a gate (sign-in, a question, an unreachable API) or moved past one: the
   * sprite says so in words. A gate's detail replaces whatever activity was reported before.
   */
  private onScreenGate(gate: ScreenGate | null): void {
    if (this.finished || this.proc.exited) return;
    const previous = this.screenGate;
    this.screenGate = gate;
    if (gate) {
      // A new gate's words replace the old ones even when the activity stays "waiting for input".
      this.activity.forget();
      this.setActivity('waiting_for_input', gate.detail);
    } else if (previous && this.activity.current === 'waiting_for_input') {
      this.setActivity('working', `past "${previous.detail}"`);
    }
  }

  /** Hook calls become events through the same paths the watcher and idle detection use. */
  private openHooks(provider: ProviderId, worktree: string): SessionHooks | null {
    if (!this.deps.hooks) return null;
    return new SessionHooks(this.deps.hooks, this.id, {
      // The session token names org and repository as well as the session (issue 12).
      scope: { org_id: this.cmd.org_id, repo_id: this.cmd.repo_id },
      provider,
      worktree,
      gate: this.gate,
      ...(this.cmd.policy?.strict_tools ? { strictTools: strictToolsFor(worktree) } : {}),
      guard: (call) => this.gate.guardCall(call),
      dta: (call) => runSessionDta(call, { worktree, emit: (body) => void this.emit(body), ask: (req) => this.broker.ask(req), strict: this.files.strict }),
      sink: {
        emit: (body) => void this.emit(body),
        activity: (activity, detail) => void this.setActivity(activity, detail),
        fileTouched: (file, reason) => void this.noteFileTouched(file, reason, 'hook'),
        invocation: () => this.usage.meter.addInvocation(),
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

  private finish(to: SessionState, reason: string, exitCode: number | null): void {
    if (this.finished) return;
    if (!canTransition(this.state, to)) to = canTransition(this.state, 'FAILED') ? 'FAILED' : to;
    if (this.redactions.size > 0) this.emit({ type: 'REDACTION_RECEIPT', entries: this.redactions.list() });
    this.transition(to, reason, exitCode);
    this.finished = true;
    this.proc.release();
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
      reason: reason.slice(0, WIRE_LIMITS.TEXT),
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
      const safe = body.type === 'TERMINAL_CHUNK' || body.type === 'REDACTION_RECEIPT' ? body : redactStrings(body, this.redactor, isKeptField, this.redactions.note);
      const seq = this.deps.spool.append(this.base, safe)?.seq ?? null;
      this.redactions.settle(seq ?? 0);
      return seq;
    } catch (err) {
      this.deps.log.error(`could not spool ${body.type} for ${this.id}`, err);
      return null;
    }
  }
}
