import fs from 'node:fs';
import path from 'node:path';
import type { CreateSessionCommand } from '../../protocol';
import type { SessionHooks } from '../hooks';
import type { EffectivePolicy } from '../policy/classify';
import type { PathGuard } from '../policy/paths';
import type { ProviderAdapter } from '../providers';
import { buildSessionEnv } from '../pty/clean-env';
import { preparePatrolLaunch } from '../patrols/patrol-run';
import { bwrapArgs, CLONE_WRITABLE, egressEnv, type EgressProxy, type SandboxSupport } from '../sandbox';
import { protectedFiles, renderPolicyBash, sandboxLaunch, SCRATCH_DIRS, writeShims, type ShimPlan } from '../shims';
import { git } from '../workspace/git';
import { readOnlyLaunch } from '../workspace/read-only';
import type { PreparedWorktree } from '../workspace/workspace-manager';

/**
 * The launch plan: everything that decides what a session spawns, as one plain data structure
 * (command, environment, mounts, network, isolation) built by a pure function, so it is unit-tested
 * without a PTY and each later addition (a session-leader wrapper, a per-session token in the
 * environment, a provider's extra files) is one field. `spawnOf` turns it into argv.
 */

export type Isolation =
  /** Nothing: the program runs as the runner's user in the runner's namespaces. */
  | 'none'
  /** As root without a sandbox: a private mount namespace with the worktree read-only (workspace/read-only.ts). */
  | 'read_only_mount'
  /** As root without a sandbox: the guard namespace of shims/index.ts (binds, read-only machine, loopback-only network). */
  | 'guard_namespace'
  /** bubblewrap (runner/sandbox): own mount, PID, IPC, UTS (and network) namespaces, seccomp, hidden runner data. */
  | 'sandbox';

export interface LaunchCommand {
  file: string;
  args: string[];
}

export interface LaunchPlan {
  sessionId: string;
  mode: 'write' | 'read_only';
  /** The provider's (or patrol's) own program, before any isolation wraps it. */
  command: LaunchCommand;
  env: Record<string, string>;
  cwd: string;
  size: { cols: number; rows: number };
  mounts: {
    worktree: { path: string; writable: boolean };
    /** The cached clone the worktree commits into. */
    clone: { path: string; writable: boolean };
    /** The session's throwaway HOME (writable). */
    home: string;
    /** [source, target] binds made before anything else (the guard shims' real programs and wrappers). */
    binds: Array<[string, string]>;
    /** Files inside the worktree the path guard protects: bound read-only over themselves. */
    readOnly: string[];
    /** Scratch space programs expect to write to. */
    scratch: string[];
    /** Paths the session must not see (sandbox only): covered by empty read-only mounts. */
    hidden: string[];
    /** Directories of Unix sockets the session calls back on (the hook channel), bound in read-only. */
    sockets: string[];
  };
  /**
   * restricted: own network namespace; with an egress socket, allowed hosts are reached through
   * the runner's filtering proxy (HTTP(S)_PROXY points at the in-sandbox forwarder).
   */
  network: { mode: 'restricted' | 'open'; allowHosts: string[]; egressSocket: string | null };
  /** An interactive program keeps its controlling terminal; a patrol does not need one. */
  interactive: boolean;
  isolation: Isolation;
  /** How the sandbox is started (isolation 'sandbox' only). */
  sandbox: Pick<SandboxSupport, 'bwrap' | 'seccompFile' | 'root'> | null;
  /** The node that runs the in-sandbox helpers (the runner's own). */
  nodePath: string;
}

export interface LaunchPlanInput {
  sessionId: string;
  command: LaunchCommand;
  env: Record<string, string>;
  cwd: string;
  size: { cols: number; rows: number };
  mode: 'write' | 'read_only';
  worktree: string;
  clone: string;
  home: string;
  shims: ShimPlan | null;
  forbidden: string[];
  network: 'restricted' | 'open';
  /** Hosts the egress proxy lets through (restricted network). */
  allowHosts?: string[];
  /** The running egress proxy's socket, when there is one for this session. */
  egressSocket?: string | null;
  /** Unix socket directories the session needs (hook channel). */
  sockets?: string[];
  interactive?: boolean;
  /** What this runner can do (runner/main.ts probes it once). */
  can: { readOnlyMount: boolean; guardNamespace: boolean; sandbox?: SandboxSupport | null };
  nodePath?: string;
}

/** Pure: what to spawn for this session, decided from the inputs alone. */
export function planLaunch(input: LaunchPlanInput): LaunchPlan {
  const sandbox = input.can.sandbox?.available ? input.can.sandbox : null;
  const readOnly = input.mode === 'read_only' && (input.can.readOnlyMount || sandbox !== null);
  const namespace = input.can.guardNamespace || sandbox !== null;
  const guarded = namespace && (input.shims !== null || input.forbidden.length > 0 || input.network === 'restricted' || readOnly);
  const isolation: Isolation = sandbox ? 'sandbox' : guarded ? 'guard_namespace' : readOnly ? 'read_only_mount' : 'none';
  const egressSocket = sandbox && input.network === 'restricted' ? (input.egressSocket ?? null) : null;
  return {
    sessionId: input.sessionId,
    mode: input.mode,
    command: input.command,
    // The proxy variables come last: a provider cannot point them elsewhere by accident.
    env: egressSocket ? { ...input.env, ...egressEnv() } : input.env,
    cwd: input.cwd,
    size: input.size,
    mounts: {
      // Without a read-only mount a read-only session's writes are detected and reverted instead.
      worktree: { path: input.worktree, writable: !readOnly },
      clone: { path: input.clone, writable: !readOnly },
      home: input.home,
      binds: namespace ? (input.shims?.binds ?? []) : [],
      readOnly: namespace ? input.forbidden : [],
      scratch: SCRATCH_DIRS,
      hidden: sandbox ? sandbox.hidden : [],
      sockets: sandbox ? (input.sockets ?? []) : [],
    },
    network: { mode: input.network, allowHosts: egressSocket ? (input.allowHosts ?? []) : [], egressSocket },
    interactive: input.interactive ?? true,
    isolation,
    sandbox: sandbox ? { bwrap: sandbox.bwrap, seccompFile: sandbox.seccompFile, root: sandbox.root } : null,
    nodePath: input.nodePath ?? process.execPath,
  };
}

/** The argv that starts the plan's command under its isolation. */
export function spawnOf(plan: LaunchPlan): LaunchCommand {
  const { command, mounts } = plan;
  switch (plan.isolation) {
    case 'none':
      return command;
    case 'sandbox':
      return bwrapArgs({
        bwrap: plan.sandbox!.bwrap,
        seccompFile: plan.sandbox!.seccompFile,
        root: plan.sandbox!.root,
        interactive: plan.interactive,
        sessionId: plan.sessionId,
        command,
        cwd: plan.cwd,
        worktree: mounts.worktree,
        clone: mounts.clone,
        home: mounts.home,
        binds: mounts.binds,
        readOnly: mounts.readOnly,
        hidden: mounts.hidden,
        sockets: mounts.sockets,
        network: { mode: plan.network.mode, egressSocket: plan.network.egressSocket },
        nodePath: plan.nodePath,
      });
    case 'read_only_mount':
      return readOnlyLaunch(mounts.worktree.path, plan.cwd, command.file, command.args);
    case 'guard_namespace': {
      const roWorktree = !mounts.worktree.writable;
      return sandboxLaunch(
        {
          binds: mounts.binds,
          readOnly: [...(roWorktree ? [mounts.worktree.path] : []), ...mounts.readOnly],
          isolateNet: plan.network.mode === 'restricted',
          // Writes outside the workspace are prevented: the worktree and the clone it commits
          // into (not for read-only sessions), the session's HOME and the usual scratch space.
          writable: [...(roWorktree ? [] : [mounts.worktree.path, mounts.clone.path]), mounts.home, ...mounts.scratch],
          cwd: plan.cwd,
        },
        command.file,
        command.args,
      );
    }
  }
}

/** What preparing a launch needs from its session; the session keeps what it opens (hooks, proxy) so its cleanup closes them even when a later step fails. */
export interface LaunchPrep {
  cmd: CreateSessionCommand;
  policy: EffectivePolicy;
  paths: PathGuard;
  /** The cached clone the worktree commits into. */
  clone: string;
  can: { readOnlyMount: boolean; guardNamespace: boolean; sandbox: SandboxSupport | null };
  /** Opens the session's hook channel (null: none, e.g. a patrol) and keeps it on the session. */
  openHooks(provider: ProviderAdapter['id'], worktree: string): SessionHooks | null;
  /** Restricted network asked for where no namespace can be made: the session says so loudly. */
  warnUnsandboxed(): void;
  /** Starts the session's egress proxy and keeps it on the session. */
  startEgress(allowHosts: string[]): Promise<EgressProxy>;
}

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

/** Tracked files the path guard protects: bind-mounted read-only in the namespace (prevention). */
async function forbiddenFiles(worktree: string, paths: PathGuard): Promise<string[]> {
  const listing = await git(['ls-files', '-z'], { cwd: worktree, what: 'ls-files' }).catch(() => '');
  return protectedFiles(worktree, listing.split('\0').filter(Boolean), (rel) => paths.violation(rel) !== null);
}

/** Home files, hooks, shims and the provider's own preparation; then the launch plan. */
export async function prepareLaunch(prep: LaunchPrep, provider: ProviderAdapter, worktree: PreparedWorktree, home: string): Promise<LaunchPlan> {
  const { cmd, policy } = prep;
  const cwd = startDirectory(worktree.path, cmd.room_path);
  const env = buildSessionEnv({ session_id: cmd.session_id, home });
  // A patrol is the runner's own command: no agent hooks, shims or policy prompts.
  const hookChannel = cmd.patrol ? null : prep.openHooks(provider.id, worktree.path);
  const sandbox = prep.can.sandbox?.available ? prep.can.sandbox : null;
  const namespace = prep.can.guardNamespace || sandbox !== null;
  if (policy.network === 'restricted' && !namespace) prep.warnUnsandboxed();
  // A read-only patrol checks what is there; it gets no way out (README, "Threat model"). The
  // proxy runs even with nothing allowed, so every refused host is shown and audited.
  const allowHosts = cmd.patrol && cmd.mode === 'read_only' ? [] : policy.allowHosts;
  const egress = sandbox && policy.network === 'restricted' ? await prep.startEgress(allowHosts) : null;
  // The guard shims go first on PATH (and over the real binaries in the namespace).
  const shims = hookChannel ? await writeShims({ home, endpoint: hookChannel.endpoint, policy, pathDirs: env.PATH.split(':'), namespace }) : null;
  if (shims) env.PATH = `${shims.binDir}:${env.PATH}`;
  const policyBash = shims && (policy.denylist.length > 0 || policy.allowlist.size > 0) ? path.join(home, '.agent-village', 'policy.bash') : null;
  if (policyBash && shims) {
    await fs.promises.writeFile(policyBash, renderPolicyBash(policy, shims.configPath), { mode: 0o644 });
    // Every non-interactive bash the session starts (bash -c, scripts, agents' tools) sources it too.
    env.BASH_ENV = policyBash;
  }
  // Org secrets stay out of the environment unless an admin marked them "inject into sessions";
  // the rest reach a process only through an approved `av-secret NAME -- cmd` (the gate has them all).
  const injected = Object.fromEntries(Object.entries(cmd.secrets ?? {}).filter(([name]) => cmd.inject_secrets?.includes(name)));
  const launchCtx = { session_id: cmd.session_id, home, cwd, worktree_path: worktree.path, env, command: cmd, hook: hookChannel?.endpoint, secrets: injected, credentialSource: cmd.secrets ?? {} };
  let launch;
  if (cmd.patrol) {
    launch = await preparePatrolLaunch(cmd.patrol, home, env);
  } else {
    await provider.prepare?.(launchCtx);
    // After the provider's own .bashrc part, so the check wraps its preexec hook.
    if (policyBash) await fs.promises.appendFile(path.join(home, '.bashrc'), `\nsource ${JSON.stringify(policyBash)}\n`);
    launch = provider.launch(launchCtx);
  }
  const forbidden = namespace && prep.paths.active && cmd.mode === 'write' ? await forbiddenFiles(worktree.path, prep.paths) : [];
  if (sandbox && cmd.mode === 'write') {
    // The clone is read-only in the sandbox except what a commit writes; those must exist to be bound.
    for (const part of CLONE_WRITABLE) await fs.promises.mkdir(path.join(prep.clone, part), { recursive: true });
  }
  return planLaunch({
    sessionId: cmd.session_id,
    command: { file: launch.file, args: launch.args },
    env: launch.env,
    cwd,
    size: { cols: cmd.cols, rows: cmd.rows },
    mode: cmd.mode,
    worktree: worktree.path,
    clone: prep.clone,
    home,
    shims,
    forbidden,
    network: policy.network,
    allowHosts,
    egressSocket: egress?.socket ?? null,
    sockets: hookChannel?.endpoint.socket ? [path.dirname(hookChannel.endpoint.socket)] : [],
    interactive: !cmd.patrol,
    can: { readOnlyMount: prep.can.readOnlyMount, guardNamespace: prep.can.guardNamespace, sandbox },
  });
}
