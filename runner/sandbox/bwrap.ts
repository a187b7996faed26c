import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * bubblewrap argv for one launch plan (pure: paths in, argv out; tests pin it). What the session
 * gets, in this order (bwrap applies its options one after the other):
 * - its own PID, IPC, UTS and cgroup namespaces (and network namespace for restricted network);
 *   `--die-with-parent`; capabilities dropped (a root runner's sessions keep uid 0 but no
 *   capability); no new privileges (bwrap always sets it);
 * - the machine read-only, a fresh /dev and /proc (its own processes only), private /tmp and
 *   /var/tmp;
 * - the hidden paths (control plane DATA_DIR, the runner's data dir, credential files of the
 *   runner's user) covered by empty read-only tmpfs (or /dev/null for a file);
 * - then bound back in: the worktree (read-write or read-only), the cached clone (read-only, with
 *   the parts a commit writes read-write for write sessions: objects, refs, logs, this worktree's
 *   admin dir — never its config or hooks, which the runner's own git would run), HOME, the guard
 *   wrappers over the real binaries, forbidden files read-only, the hook and egress sockets.
 */

export const BWRAP_PATH = '/usr/bin/bwrap';
/** The fd the seccomp program is passed on (opened by the small sh step in front of bwrap). */
export const SECCOMP_FD = 9;
/** The in-sandbox forwarder's port (its own network namespace: nothing else can hold it). */
export const EGRESS_PROXY_PORT = 3128;
export const EGRESS_FORWARDER_PATH = fileURLToPath(new URL('./egress-forwarder.mjs', import.meta.url));
/**
 * Parts of the clone a commit, a branch update and a `git push .` write (the caller creates any
 * that are missing: a mount point cannot be made in the read-only clone). packed-refs is replaced
 * by a rename in the clone's root, which stays read-only: deleting a packed branch fails.
 */
export const CLONE_WRITABLE = ['objects', 'refs', 'logs'];

export interface BwrapInput {
  bwrap: string;
  /** A compiled seccomp program to apply (null: none; the caller logged why). */
  seccompFile: string | null;
  /** The runner is root: drop every capability explicitly (unprivileged bwrap has none to drop). */
  root: boolean;
  interactive: boolean;
  sessionId: string;
  command: { file: string; args: string[] };
  cwd: string;
  worktree: { path: string; writable: boolean };
  clone: { path: string; writable: boolean };
  home: string;
  binds: Array<[string, string]>;
  readOnly: string[];
  hidden: string[];
  sockets: string[];
  network: { mode: 'restricted' | 'open'; egressSocket: string | null };
  /** Node for the egress forwarder (the runner's own). */
  nodePath: string;
}

const exists = (p: string) => fs.existsSync(p);
const isDir = (p: string) => {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** Environment a program needs to use the egress proxy (curl, git, npm, pip and the agent CLIs read these). */
export function egressEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: 'localhost,127.0.0.1,::1',
    no_proxy: 'localhost,127.0.0.1,::1',
    npm_config_proxy: url,
    npm_config_https_proxy: url,
  };
}

export function bwrapArgs(input: BwrapInput): { file: string; args: string[] } {
  const a: string[] = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  if (input.network.mode === 'restricted') a.push('--unshare-net');
  // A non-interactive program (patrol) needs no controlling terminal: a new session also stops
  // TIOCSTI. An interactive one keeps its terminal; the seccomp filter refuses TIOCSTI instead.
  if (!input.interactive) a.push('--new-session');
  if (input.root) a.push('--cap-drop', 'ALL');
  a.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp');
  const hiddenDirs: string[] = [];
  // A path inside another hidden one is covered already (and a second mount under the first
  // tmpfs would be buried by it, then fail to remount).
  const hidden = [...new Set(input.hidden.map((h) => path.resolve(h)))];
  const outermost = hidden.filter((h) => !hidden.some((o) => o !== h && h.startsWith(o + path.sep)));
  for (const h of outermost) {
    if (!exists(h)) continue;
    if (isDir(h)) {
      a.push('--tmpfs', h);
      hiddenDirs.push(h);
    } else a.push('--ro-bind', '/dev/null', h);
  }
  const wt = input.worktree;
  a.push(wt.writable ? '--bind' : '--ro-bind', wt.path, wt.path);
  if (input.clone.path && exists(input.clone.path)) {
    a.push('--ro-bind', input.clone.path, input.clone.path);
    if (input.clone.writable) {
      for (const part of [...CLONE_WRITABLE, path.join('worktrees', input.sessionId)]) {
        const p = path.join(input.clone.path, part);
        if (exists(p)) a.push('--bind', p, p);
      }
    }
  }
  a.push('--bind', input.home, input.home);
  for (const [src, dst] of input.binds) a.push('--ro-bind', src, dst);
  for (const f of input.readOnly) a.push('--ro-bind', f, f);
  for (const s of input.sockets) a.push('--ro-bind', s, s);
  if (input.network.egressSocket) {
    const dir = path.dirname(input.network.egressSocket);
    a.push('--ro-bind', dir, dir);
  }
  // Read-only only now: the binds above needed their mount points created inside.
  for (const h of hiddenDirs) a.push('--remount-ro', h);
  a.push('--chdir', input.cwd);
  if (input.seccompFile) a.push('--seccomp', String(SECCOMP_FD));
  const program =
    input.network.mode === 'restricted' && input.network.egressSocket
      ? [input.nodePath, EGRESS_FORWARDER_PATH, input.network.egressSocket, String(EGRESS_PROXY_PORT), input.command.file, ...input.command.args]
      : [input.command.file, ...input.command.args];
  a.push('--', ...program);
  if (!input.seccompFile) return { file: input.bwrap, args: a };
  // bwrap reads the filter from an fd; node-pty passes only the terminal, so a shell opens it and becomes bwrap.
  return { file: '/bin/sh', args: ['-c', `exec ${SECCOMP_FD}<"$0" && exec "$@"`, input.seccompFile, input.bwrap, ...a] };
}
