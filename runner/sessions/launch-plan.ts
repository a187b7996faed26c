import { bwrapArgs, egressEnv, type SandboxSupport } from '../sandbox';
import { sandboxLaunch, SCRATCH_DIRS, type ShimPlan } from '../shims';
import { readOnlyLaunch } from '../workspace/read-only';

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
