import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Read-only sessions (audits) as root: `chmod a-w` does not stop root, so the session's process
 * starts in a private mount namespace where its worktree is bind-mounted read-only, and then
 * drops the capabilities that could undo that:
 * - sys_admin: remount, mount, unshare, setns into the runner's namespace;
 * - sys_ptrace: reaching the runner's namespace through /proc/<pid>/root or ptrace;
 * - dac_read_search: open_by_handle_at, which opens a file through another (writable) mount;
 * - linux_immutable, sys_module, sys_rawio, mknod: chattr, kernel modules, raw devices.
 * Writes then fail with EROFS, for root too. Anything outside the worktree stays as writable as
 * for any session. Needs root (CAP_SYS_ADMIN), util-linux `unshare` and `setpriv`.
 */
export const READ_ONLY_DROPPED_CAPS = ['sys_admin', 'sys_ptrace', 'dac_read_search', 'linux_immutable', 'sys_module', 'sys_rawio', 'mknod'];

const UNSHARE = '/usr/bin/unshare';
const SETPRIV = '/usr/bin/setpriv';
/** The probe runs once per runner start; a hung mount helper must not hold the start-up. */
const PROBE_TIMEOUT_MS = 5_000;

/**
 * `sh -c` script run inside the new namespace: $1 = worktree, $2 = start directory, rest = the
 * provider's command. The `cd` matters: the process's old working directory still points into
 * the writable mount underneath.
 */
const SCRIPT = [
  'set -e',
  'mount --bind -- "$1" "$1"',
  'mount -o remount,bind,ro -- "$1"',
  'cd -- "$2"',
  'shift 2',
  `exec ${SETPRIV} --bounding-set ${READ_ONLY_DROPPED_CAPS.map((c) => `-${c}`).join(',')} --inh-caps ${READ_ONLY_DROPPED_CAPS.map((c) => `-${c}`).join(',')} -- "$@"`,
].join('\n');

/** The command that runs `file args` with `worktree` read-only (see above). */
export function readOnlyLaunch(worktree: string, cwd: string, file: string, args: string[]): { file: string; args: string[] } {
  return { file: UNSHARE, args: ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', SCRIPT, 'sh', worktree, cwd, file, ...args] };
}

/**
 * Tries the real thing once on a scratch directory: true only if a write inside failed with
 * "Read-only file system" while the same write outside the namespace works.
 */
export async function probeReadOnlyPrevention(): Promise<{ available: boolean; why: string }> {
  if (process.platform !== 'linux') return { available: false, why: 'mount namespaces need Linux' };
  if (process.getuid?.() !== 0) return { available: false, why: 'the runner is not root (chmod a-w already binds it and its sessions)' };
  if (!fs.existsSync(UNSHARE) || !fs.existsSync(SETPRIV)) return { available: false, why: `${UNSHARE} or ${SETPRIV} is missing` };
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'ro-probe-'));
  try {
    const launch = readOnlyLaunch(dir, dir, '/bin/sh', ['-c', 'echo x > probe 2>&1 || exit 7; exit 0']);
    const code = await new Promise<number | null>((resolve) => {
      execFile(launch.file, launch.args, { timeout: PROBE_TIMEOUT_MS }, (err) => resolve(err ? ((err as { code?: number }).code ?? -1) : 0));
    });
    if (code !== 7) return { available: false, why: `a read-only bind mount could not be set up (probe exit ${code})` };
    if (fs.existsSync(path.join(dir, 'probe'))) return { available: false, why: 'the probe wrote through the read-only mount' };
    return { available: true, why: 'private mount namespace with a read-only bind mount, capabilities dropped' };
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}
