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
  | 'guard_namespace';

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
  };
  network: { mode: 'restricted' | 'open' };
  isolation: Isolation;
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
  /** What this runner can do (runner/main.ts probes it once). */
  can: { readOnlyMount: boolean; guardNamespace: boolean };
}

/** Pure: what to spawn for this session, decided from the inputs alone. */
export function planLaunch(input: LaunchPlanInput): LaunchPlan {
  const readOnly = input.mode === 'read_only' && input.can.readOnlyMount;
  const namespace = input.can.guardNamespace;
  const guarded = namespace && (input.shims !== null || input.forbidden.length > 0 || input.network === 'restricted' || readOnly);
  const isolation: Isolation = guarded ? 'guard_namespace' : readOnly ? 'read_only_mount' : 'none';
  return {
    sessionId: input.sessionId,
    mode: input.mode,
    command: input.command,
    env: input.env,
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
    },
    network: { mode: input.network },
    isolation,
  };
}

/** The argv that starts the plan's command under its isolation. */
export function spawnOf(plan: LaunchPlan): LaunchCommand {
  const { command, mounts } = plan;
  switch (plan.isolation) {
    case 'none':
      return command;
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
