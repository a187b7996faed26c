/**
 * A small seccomp-bpf program for bwrap's `--seccomp FD`, generated here rather than with
 * libseccomp (no native dependency): it refuses what a session needs never do and what could
 * undo its sandbox. Modelled on the filters of Docker, Flatpak and sandbox-runtime:
 * - new namespaces (`unshare`, `setns`, `clone` with a CLONE_NEW* flag; `clone3` answers ENOSYS
 *   so libc falls back to `clone`, whose flags a filter can read) and every mount call: the binds
 *   that hide the runner's files hold only in this mount namespace;
 * - TIOCSTI / TIOCLINUX on any terminal: pushing keystrokes into the PTY the session shares with
 *   no one but could reach a parent terminal (bwrap's --new-session is the other cure, but an
 *   interactive shell needs its controlling terminal);
 * - kernel keyrings, bpf, perf events, userfaultfd, module and kexec loading, swap, reboot, acct;
 * - on x86-64 the x32 ABI (same calls under other numbers) and any other architecture.
 * Everything refused answers EPERM (ENOSYS for clone3), never kills: a tool sees an error.
 */

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
/** seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 i (low word first on little-endian). */
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0_LO = 16;
const OFF_ARG1_LO = 24;
const X32_SYSCALL_BIT = 0x40000000;
/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET. */
const CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;

// BPF opcodes (linux/filter.h).
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

interface ArchTable {
  audit: number;
  x32: boolean;
  deny: number[];
  clone: number;
  clone3: number;
  ioctl: number;
}

/** Names kept beside numbers so the tables can be checked against `ausyscall` / the kernel headers. */
const DENIED = [
  'unshare', 'setns', 'mount', 'umount2', 'pivot_root', 'open_tree', 'move_mount', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr',
  'keyctl', 'add_key', 'request_key', 'bpf', 'perf_event_open', 'userfaultfd', 'kexec_load', 'kexec_file_load', 'init_module', 'finit_module',
  'delete_module', 'acct', 'swapon', 'swapoff', 'reboot',
] as const;

const X86_64: Record<(typeof DENIED)[number], number> = {
  unshare: 272, setns: 308, mount: 165, umount2: 166, pivot_root: 155, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432,
  fspick: 433, mount_setattr: 442, keyctl: 250, add_key: 248, request_key: 249, bpf: 321, perf_event_open: 298, userfaultfd: 323, kexec_load: 246,
  kexec_file_load: 320, init_module: 175, finit_module: 313, delete_module: 176, acct: 163, swapon: 167, swapoff: 168, reboot: 169,
};
const AARCH64: Record<(typeof DENIED)[number], number> = {
  unshare: 97, setns: 268, mount: 40, umount2: 39, pivot_root: 41, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432,
  fspick: 433, mount_setattr: 442, keyctl: 219, add_key: 217, request_key: 218, bpf: 280, perf_event_open: 241, userfaultfd: 282, kexec_load: 104,
  kexec_file_load: 294, init_module: 105, finit_module: 273, delete_module: 106, acct: 89, swapon: 224, swapoff: 225, reboot: 142,
};

const ARCHES: Record<string, ArchTable> = {
  x64: { audit: 0xc000003e, x32: true, deny: DENIED.map((n) => X86_64[n]), clone: 56, clone3: 435, ioctl: 16 },
  arm64: { audit: 0xc00000b7, x32: false, deny: DENIED.map((n) => AARCH64[n]), clone: 220, clone3: 435, ioctl: 29 },
};

export const SECCOMP_DENIED_SYSCALLS: readonly string[] = DENIED;

type Insn = { code: number; jt: number | string; jf: number | string; k: number } | { label: string };

/** The filter for this CPU (`process.arch`), or null where there is no table (the sandbox then runs without one, and says so). */
export function seccompProgram(arch: string = process.arch): Buffer | null {
  const t = ARCHES[arch];
  if (!t) return null;
  const ins: Insn[] = [];
  const op = (code: number, k: number, jt: number | string = 0, jf: number | string = 0) => ins.push({ code, jt, jf, k });
  op(BPF_LD_W_ABS, OFF_ARCH);
  op(BPF_JEQ_K, t.audit, 1, 0);
  op(BPF_RET_K, SECCOMP_RET_ERRNO | ENOSYS);
  op(BPF_LD_W_ABS, OFF_NR);
  if (t.x32) op(BPF_JGE_K, X32_SYSCALL_BIT, 'eperm', 0);
  for (const nr of t.deny) op(BPF_JEQ_K, nr, 'eperm', 0);
  op(BPF_JEQ_K, t.clone3, 'enosys', 0);
  op(BPF_JEQ_K, t.clone, 0, 'ioctl');
  op(BPF_LD_W_ABS, OFF_ARG0_LO);
  op(BPF_JSET_K, CLONE_NEW_FLAGS, 'eperm', 'allow');
  ins.push({ label: 'ioctl' });
  op(BPF_JEQ_K, t.ioctl, 0, 'allow');
  op(BPF_LD_W_ABS, OFF_ARG1_LO);
  op(BPF_JEQ_K, TIOCSTI, 'eperm', 0);
  op(BPF_JEQ_K, TIOCLINUX, 'eperm', 0);
  ins.push({ label: 'allow' });
  op(BPF_RET_K, SECCOMP_RET_ALLOW);
  ins.push({ label: 'eperm' });
  op(BPF_RET_K, SECCOMP_RET_ERRNO | EPERM);
  ins.push({ label: 'enosys' });
  op(BPF_RET_K, SECCOMP_RET_ERRNO | ENOSYS);

  // Resolve labels to relative forward jumps (BPF jumps are unsigned 8-bit offsets from the next instruction).
  const at = new Map<string, number>();
  const real: Array<Exclude<Insn, { label: string }>> = [];
  for (const i of ins) {
    if ('label' in i) at.set(i.label, real.length);
    else real.push(i);
  }
  const buf = Buffer.alloc(real.length * 8);
  real.forEach((i, n) => {
    const rel = (j: number | string) => {
      if (typeof j === 'number') return j;
      const off = at.get(j)! - (n + 1);
      if (off < 0 || off > 255) throw new Error(`seccomp: jump to ${j} out of range`);
      return off;
    };
    buf.writeUInt16LE(i.code, n * 8);
    buf.writeUInt8(rel(i.jt), n * 8 + 2);
    buf.writeUInt8(rel(i.jf), n * 8 + 3);
    buf.writeUInt32LE(i.k >>> 0, n * 8 + 4);
  });
  return buf;
}
