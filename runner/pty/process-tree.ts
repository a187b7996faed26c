import fs from 'node:fs';

interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
  zombie: boolean;
  /** The command name (/proc/<pid>/stat's second field). */
  comm: string;
}

function readProc(pid: number): ProcInfo | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    return { pid, ppid: Number(rest[1]), pgid: Number(rest[2]), sid: Number(rest[3]), state: rest[0], zombie: rest[0] === 'Z', comm };
  } catch {
    return null;
  }
}

function listProcs(): ProcInfo[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const info = readProc(Number(n));
    if (info) out.push(info);
  }
  return out;
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function isProcessAlive(pid: number): boolean {
  const info = readProc(pid);
  if (info) return !info.zombie;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function trySignal(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Signals everything a session started. node-pty makes the child a session leader, so its pid is
 * also its process group; but an interactive shell puts every job (`sleep 1000 &`) in a process
 * group of its own, so the group alone misses them. On Linux we therefore also signal every
 * process group in the leader's session and every descendant. Processes that called setsid()
 * and reparented themselves (daemons) escape; that is the price of not using cgroups.
 * Returns how many targets were signalled.
 *
 * Order matters for pause/resume of an interactive shell: the leader is signalled first by
 * default (SIGSTOP: the shell stops before it can see its job stop and take the terminal back),
 * and last with `leaderLast` (SIGCONT: the jobs run again before the shell looks at them).
 */
export function signalSessionTree(leaderPid: number, signal: NodeJS.Signals, opts: { leaderLast?: boolean; spareLeader?: boolean } = {}): number {
  const groups = new Set<number>([leaderPid]);
  const pids = new Set<number>();
  const procs = listProcs();
  // spareLeader (a sandbox): bubblewrap's own processes are spared too. When the command inside
  // ends, bubblewrap's init exits only after the kernel has killed everything left in the PID
  // namespace (setsid children included), so the session's end is observed after that; a TERM to
  // bubblewrap itself would end the namespace behind the session leader's back instead.
  const spared = new Set<number>(opts.spareLeader ? procs.filter((p) => p.comm === 'bwrap').map((p) => p.pid) : []);
  if (procs.length > 0) {
    const children = new Map<number, number[]>();
    for (const p of procs) {
      if (p.zombie) continue;
      if (p.sid === leaderPid) {
        groups.add(p.pgid);
        pids.add(p.pid);
      }
      const list = children.get(p.ppid) ?? [];
      list.push(p.pid);
      children.set(p.ppid, list);
    }
    const visited = new Set<number>([leaderPid]);
    const stack = [leaderPid];
    while (stack.length > 0) {
      const pid = stack.pop()!;
      for (const c of children.get(pid) ?? []) {
        if (visited.has(c)) continue;
        visited.add(c);
        pids.add(c);
        stack.push(c);
      }
    }
  }
  // Never the runner itself, whatever /proc said.
  const own = readProc(process.pid);
  groups.delete(own?.pgid ?? -1);
  pids.delete(process.pid);
  let n = 0;
  const leaderGroup = groups.delete(leaderPid) && leaderPid > 1;
  // The leader is in its own group; signalling it once keeps the order above.
  if (leaderGroup) pids.delete(leaderPid);
  // spareLeader (a sandbox): everything but the leader itself (bubblewrap, whose death would end
  // the whole namespace at once), one process at a time — its group holds the leader too.
  if (opts.spareLeader) {
    pids.delete(leaderPid);
    for (const p of pids) if (p > 1 && !spared.has(p) && trySignal(p, signal)) n++;
    return n;
  }
  if (leaderGroup && !opts.leaderLast && trySignal(-leaderPid, signal)) n++;
  for (const g of groups) if (g > 1 && trySignal(-g, signal)) n++;
  for (const p of pids) if (p > 1 && trySignal(p, signal)) n++;
  if (leaderGroup && opts.leaderLast && trySignal(-leaderPid, signal)) n++;
  return n;
}

/** Process states of everything in the session of `leaderPid` ('T' = stopped), for tests and checks. */
export function sessionProcessStates(leaderPid: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const p of listProcs()) if (p.sid === leaderPid && !p.zombie) out.set(p.pid, p.state);
  return out;
}
