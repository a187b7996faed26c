import { WIRE_LIMITS, type ProviderId, type SessionState } from '../../protocol';
import { SessionHooks } from '../hooks';
import { errorMessage } from '../log';
import { ScreenWatch, type ScreenGate } from '../providers';
import { createSessionHome } from '../pty/clean-env';
import { runSessionDta } from '../dta/session-dta';
import { strictToolsFor } from '../dta/strict-tools';
import { patrolErrorEvent, patrolResultEvents } from '../patrols/patrol-run';
import { EgressProxy, type EgressBlocked } from '../sandbox';
import { describeDuration } from './activity-tracker';
import { prepareLaunch, spawnOf, type LaunchPrep } from './launch-plan';
import { signalName } from './process-control';
import type { Session } from './session';
import { echoTrace } from './echo-trace';

/**
 * A session's launch and exit (split from session.ts, which keeps its state machine, public
 * commands and clean-up): workspace, home and launch plan, the process with its screen watch,
 * hooks and egress proxy, then the exit read into the final state. Each function drives the
 * session's own parts.
 */

/** Exit codes above this mean "killed by signal (code - 128)" when they come from bubblewrap's init. */
const SHELL_SIGNAL_BASE = 128;
/** Highest Linux signal number (SIGRTMAX). */
const MAX_SIGNAL = 64;

export async function runSession(s: Session): Promise<void> {
  const { cmd, deps } = s;
  const provider = deps.providers.get(cmd.provider);
  try {
    if (!provider) throw new Error(`provider ${cmd.provider} is not available on this runner`);
    const what = cmd.checkout.type === 'commit' ? `commit ${cmd.checkout.ref}` : `branch ${cmd.checkout.ref}`;
    s.transition('PREPARING_WORKSPACE', `preparing a ${cmd.mode === 'read_only' ? 'read-only' : 'writable'} worktree of ${what}`);
    s.worktree = await deps.workspaces.prepareWorktree({
      session_id: cmd.session_id,
      repo_id: cmd.repo_id,
      source: cmd.repo_source,
      checkout: cmd.checkout,
      mode: cmd.mode,
    });
    if (s.stopReason !== null) return s.finishWithoutProcess('COMPLETED', `${s.stopReason} (before the provider started)`);
    s.transition('STARTING_PROVIDER', `starting ${provider.id}`);
    s.home = await createSessionHome(deps.homesDir, cmd.session_id, cmd.room_path || cmd.repo.name);
    if (s.stopReason !== null) return s.finishWithoutProcess('COMPLETED', `${s.stopReason} (before the provider started)`);
    const plan = await prepareLaunch(launchPrep(s), provider, s.worktree, s.home);
    s.launchPlan = plan;
    // Watching starts before the process, so not even its first write goes unseen.
    s.files.startWatching();
    if (!cmd.patrol && provider.screenRules) s.screen = new ScreenWatch(provider.id, provider.screenRules, cmd, (gate) => onScreenGate(s, gate));
    const pid = s.proc.spawn(spawnOf(plan), { cwd: plan.cwd, env: plan.env, ...plan.size, sandboxed: plan.isolation === 'sandbox' }, {
      data: (data) => {
        echoTrace?.read(s.id);
        s.screen?.push(data);
        s.output.push(data);
        s.patrolOutput?.append(data);
        s.hookChannel?.observeOutput(data);
        s.activity.noteIo();
      },
      exit: (exitCode, signal) => {
        void onExit(s, exitCode, signal).catch((err) => {
          s.deps.log.error(`session ${s.id} exit handling failed`, err);
          s.endNow();
        });
      },
    });
    s.emit({
      type: 'SESSION_STARTED',
      provider: provider.id,
      room_path: cmd.room_path,
      branch: s.worktree.branch,
      worktree_path: s.worktree.path,
      pid,
    });
    s.transition('RUNNING', cmd.patrol ? `${cmd.patrol.kind} patrol running as pid ${pid}: ${cmd.patrol.command}`.slice(0, WIRE_LIMITS.TEXT) : `${provider.id} running as pid ${pid}`);
    if (cmd.patrol) {
      const { kind, command, timeout_ms } = cmd.patrol;
      if (kind === 'test') s.emit({ type: 'TEST_RUN_STARTED', command: command.slice(0, WIRE_LIMITS.COMMAND) });
      s.patrolTimer = setTimeout(() => s.stop(`the patrol timed out after ${describeDuration(timeout_ms)}`), timeout_ms);
      s.patrolTimer.unref();
    }
    s.usage.start();
    // A shell has no prompts to count: its start is its one invocation. AI CLIs count their turns (hooks).
    if (provider.id === 'shell') s.usage.meter.addInvocation();
    s.activity.restart();
    deps.log.info(`session ${s.id} running (pid ${pid}) in ${plan.cwd}`);
  } catch (err) {
    const reason = errorMessage(err);
    deps.log.warn(`session ${s.id} failed to start: ${reason}`);
    if (s.proc.alive) {
      // Started but could not be reported: do not leave it running unowned.
      s.proc.killAll();
      return;
    }
    await s.finishWithoutProcess('FAILED', reason);
  }
}

/** What launch-plan.ts's prepareLaunch needs; hooks and the egress proxy stay with the session for its cleanup. */
function launchPrep(s: Session): LaunchPrep {
  const { cmd, deps } = s;
  return {
    cmd,
    policy: s.policy,
    paths: s.paths,
    clone: deps.workspaces.barePath(cmd.repo_id),
    can: { readOnlyMount: deps.readOnlyPrevention === true, guardNamespace: deps.guardNamespace === true, sandbox: deps.sandbox ?? null },
    openHooks: (provider, worktree) => (s.hookChannel = openHooks(s, provider, worktree)),
    warnUnsandboxed: () => warnUnsandboxed(s),
    startEgress: async (allow) => (s.egress = await EgressProxy.start({ allow, log: deps.log, onBlocked: (b) => onEgressBlocked(s, b) })),
  };
}

/**
 * Restricted network asked for, but this runner can make no network namespace (no bubblewrap,
 * user namespaces disabled, not root): the session runs with the runner's network, and says so
 * loudly in its terminal and as an alert (README, "Threat model").
 */
function warnUnsandboxed(s: Session): void {
  const msg = 'this runner cannot sandbox sessions (no usable bubblewrap / user namespaces): network egress is NOT restricted for this session';
  s.deps.log.warn(`session ${s.id}: ${msg}`);
  s.emit({ type: 'ALERT_RAISED', severity: 'warning', message: msg });
  s.output.push(`\x1b[1;33magent-village: ${msg}\x1b[0m\r\n`);
}

/** A connection the egress proxy refused: a line in the terminal and POLICY_BLOCKED with the host (audited). */
function onEgressBlocked(s: Session, b: EgressBlocked): void {
  if (!b.report || s.finished) return;
  const target = `${b.host}:${b.port}`;
  s.deps.log.info(`session ${s.id}: egress to ${target} refused`);
  s.output.push(`\r\n\x1b[1;31magent-village: network: blocked ${target} (not on this session's allowlist)\x1b[0m\r\n`);
  s.emit({
    type: 'POLICY_BLOCKED',
    command: `CONNECT ${target}`.slice(0, WIRE_LIMITS.POLICY_COMMAND),
    host: b.host.slice(0, 300),
    rule: `network allow_hosts does not include ${b.host}`.slice(0, WIRE_LIMITS.RULE),
    detail: `a connection to ${target} was refused by the session's egress proxy`.slice(0, WIRE_LIMITS.TEXT),
    outcome: 'prevented',
  });
}

async function onExit(s: Session, exitCode: number, signal: number): Promise<void> {
  s.activity.clear();
  s.output.end();
  s.usage.finish();
  // Jobs the program left behind must not outlive the worktree they run in.
  s.proc.killAll();
  // bubblewrap's init reports a program killed by signal N as exit code 128 + N (a shell's
  // convention); turn it back into the signal so "killed by SIGKILL" reads the same sandboxed.
  if (s.launchPlan?.isolation === 'sandbox' && !signal && exitCode > SHELL_SIGNAL_BASE && exitCode <= SHELL_SIGNAL_BASE + MAX_SIGNAL) signal = exitCode - SHELL_SIGNAL_BASE;
  const sig = signalName(signal);
  const how = sig ? `killed by ${sig}` : `exited with code ${exitCode}`;
  let to: SessionState;
  let reason: string;
  if (s.stopReason !== null) {
    to = 'COMPLETED';
    reason = `${s.stopReason} (${how})`;
  } else if (!sig && exitCode === 0) {
    to = 'COMPLETED';
    reason = how;
  } else {
    to = 'FAILED';
    // "exited with code 1: Failed to connect to api.anthropic.com: ENOTFOUND" says what to fix.
    const last = await s.screen?.lastLine().catch(() => null);
    reason = last ? `${how}: ${last}` : how;
  }
  s.screen?.close();
  s.deps.log.info(`session ${s.id} ${how}`);
  if (s.cmd.patrol && s.worktree) {
    const events = await patrolResultEvents(
      s.cmd.patrol,
      { exitCode: sig ? null : exitCode, signal: sig, stoppedBecause: s.stopReason },
      s.patrolOutput?.value ?? '',
      s.worktree,
      s.createdAt,
    ).catch((err) => {
      s.deps.log.error(`patrol result of ${s.id} failed`, err);
      return [patrolErrorEvent(s.cmd.patrol!, `the runner could not read its result: ${errorMessage(err)}`, s.worktree?.sha ?? null, s.createdAt)];
    });
    for (const e of events) s.emit(e);
  }
  await s.cleanup();
  s.finish(to, reason, sig ? null : exitCode);
}

/**
 * The screen shows a gate (sign-in, a question, an unreachable API) or moved past one: the
 * sprite says so in words. A gate's detail replaces whatever activity was reported before.
 */
function onScreenGate(s: Session, gate: ScreenGate | null): void {
  if (s.finished || s.proc.exited) return;
  const previous = s.screenGate;
  s.screenGate = gate;
  if (gate) {
    // A new gate's words replace the old ones even when the activity stays "waiting for input".
    s.activity.forget();
    s.setActivity('waiting_for_input', gate.detail);
  } else if (previous && s.activity.current === 'waiting_for_input') {
    s.setActivity('working', `past "${previous.detail}"`);
  }
}

/** Hook calls become events through the same paths the watcher and idle detection use. */
function openHooks(s: Session, provider: ProviderId, worktree: string): SessionHooks | null {
  if (!s.deps.hooks) return null;
  return new SessionHooks(s.deps.hooks, s.id, {
    // The session token names org and repository as well as the session (issue 12).
    scope: { org_id: s.cmd.org_id, repo_id: s.cmd.repo_id },
    provider,
    worktree,
    gate: s.gate,
    ...(s.cmd.policy?.strict_tools ? { strictTools: strictToolsFor(worktree) } : {}),
    guard: (call) => s.gate.guardCall(call),
    dta: (call) => runSessionDta(call, { worktree, emit: (body) => void s.emit(body), ask: (req) => s.broker.ask(req), strict: s.files.strict }),
    sink: {
      emit: (body) => void s.emit(body),
      activity: (activity, detail) => void s.setActivity(activity, detail),
      fileTouched: (file, reason) => void s.noteFileTouched(file, reason, 'hook'),
      invocation: () => s.usage.meter.addInvocation(),
    },
  });
}
