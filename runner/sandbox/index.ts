import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bwrapArgs, BWRAP_PATH } from './bwrap';
import { seccompProgram } from './seccomp';

export { bwrapArgs, egressEnv, EGRESS_PROXY_PORT, BWRAP_PATH, CLONE_WRITABLE, type BwrapInput } from './bwrap';
export { EgressProxy, hostAllowed, type EgressBlocked } from './egress-proxy';
export { seccompProgram, SECCOMP_DENIED_SYSCALLS } from './seccomp';

/** The probe runs once per runner start; a hung helper must not hold the start-up. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Files of the runner's OS user that hold credentials: hidden from sessions (their HOME is a
 * throwaway one anyway; these cover an absolute path).
 */
export const CREDENTIAL_PATHS = ['.ssh', '.aws', '.azure', '.kube', '.docker', '.gnupg', '.netrc', '.npmrc', '.pypirc', '.git-credentials', '.config/gcloud', '.config/gh', '.claude', '.claude.json', '.codex', '.gemini', '.agent-runner'];

/** What this runner can give its sessions (probed once at start; README "Threat model"). */
export interface SandboxSupport {
  available: boolean;
  /** Why, in words, for the start-up log. */
  why: string;
  bwrap: string;
  /** The compiled seccomp filter, when this CPU has a table and bwrap accepted it. */
  seccompFile: string | null;
  root: boolean;
  /** Paths no session may see: the runner's data dir, the control plane's (AGENT_RUNNER_PRIVATE_PATHS), credentials. */
  hidden: string[];
}

export const NO_SANDBOX: SandboxSupport = { available: false, why: 'disabled', bwrap: BWRAP_PATH, seccompFile: null, root: false, hidden: [] };

/**
 * The same sandbox around a non-interactive command that is not a session (a DTA run, a work
 * item, a verifier): one working folder (read-write or read-only), a throwaway HOME, the runner's
 * hidden paths, its own PID namespace, and no network unless an egress socket is given. Spawn the
 * result with child_process like the command itself.
 */
export function sandboxCommand(
  support: SandboxSupport,
  input: { command: { file: string; args: string[] }; cwd: string; workdir: { path: string; writable: boolean }; home: string; egressSocket?: string | null; sockets?: string[] },
): { file: string; args: string[] } {
  if (!support.available) return input.command;
  return bwrapArgs({
    bwrap: support.bwrap,
    seccompFile: support.seccompFile,
    root: support.root,
    interactive: false,
    sessionId: '',
    command: input.command,
    cwd: input.cwd,
    worktree: input.workdir,
    clone: { path: '', writable: false },
    home: input.home,
    binds: [],
    readOnly: [],
    hidden: support.hidden,
    sockets: input.sockets ?? [],
    network: { mode: 'restricted', egressSocket: input.egressSocket ?? null },
    nodePath: process.execPath,
  });
}

/** Everything a session must not see, as absolute paths. */
export function hiddenPaths(dataDir: string, privatePaths: string[], home = os.homedir()): string[] {
  const out = new Set<string>([path.resolve(dataDir), ...privatePaths.map((p) => path.resolve(p))]);
  for (const c of CREDENTIAL_PATHS) out.add(path.join(home, c));
  return [...out];
}

function run(file: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: PROBE_TIMEOUT_MS, encoding: 'utf8' }, (err, _stdout, stderr) =>
      resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0, stderr: String(stderr).trim() }),
    );
  });
}

/**
 * Tries the real thing: bubblewrap with every namespace, then again with the seccomp filter, which
 * must refuse `unshare` inside. `dir` is a private directory of the runner for the filter file.
 */
export async function probeSandbox(opts: { dir: string; hidden: string[]; bwrap?: string }): Promise<SandboxSupport> {
  const bwrap = opts.bwrap ?? BWRAP_PATH;
  const root = process.getuid?.() === 0;
  const base = { bwrap, root, hidden: opts.hidden };
  if (process.platform !== 'linux') return { ...base, available: false, why: 'bubblewrap needs Linux', seccompFile: null };
  if (!fs.existsSync(bwrap)) return { ...base, available: false, why: `${bwrap} is missing (Debian/Ubuntu: apt-get install bubblewrap)`, seccompFile: null };
  const common = ['--die-with-parent', '--unshare-all', ...(root ? ['--cap-drop', 'ALL'] : []), '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  const plain = await run(bwrap, [...common, '--', '/bin/true']);
  if (plain.code !== 0) {
    return {
      ...base,
      available: false,
      seccompFile: null,
      why: `bubblewrap cannot create namespaces here (${plain.stderr || `exit ${plain.code}`}); user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or AppArmor's apparmor_restrict_unprivileged_userns)`,
    };
  }
  const program = seccompProgram();
  if (!program) return { ...base, available: true, seccompFile: null, why: `bubblewrap works; no seccomp filter for ${process.arch}` };
  await fs.promises.mkdir(opts.dir, { recursive: true, mode: 0o700 });
  const file = path.join(opts.dir, `seccomp-${process.arch}.bpf`);
  await fs.promises.writeFile(file, program, { mode: 0o644 });
  const args = bwrapArgs({
    bwrap,
    seccompFile: file,
    root,
    interactive: false,
    sessionId: 'probe',
    command: { file: '/bin/sh', args: ['-c', 'unshare -U true 2>/dev/null && exit 9; exit 0'] },
    cwd: '/',
    worktree: { path: '/tmp', writable: true },
    clone: { path: '/nonexistent-clone', writable: false },
    home: '/tmp',
    binds: [],
    readOnly: [],
    hidden: [],
    sockets: [],
    network: { mode: 'restricted', egressSocket: null },
    nodePath: process.execPath,
  });
  const filtered = await run(args.file, args.args);
  if (filtered.code === 0) return { ...base, available: true, seccompFile: file, why: 'bubblewrap with PID, mount, network namespaces and a seccomp filter' };
  return { ...base, available: true, seccompFile: null, why: `bubblewrap works, but the seccomp filter did not hold (exit ${filtered.code}: ${filtered.stderr}); sessions run without it` };
}
