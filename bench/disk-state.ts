import fs from 'node:fs';

/**
 * What a bench part costs (CPU split into user and system) and what the disk under it does.
 *
 * This machine's ext4 has no journal and is mounted with `discard` (diskFacts below). Two of its
 * habits made `grep -rl | xargs sed -i` take 0.35 s or 2.4 s on the same tree, and they touch any
 * work that makes or frees thousands of files (bench:dta-disk measures both):
 * - Without a journal, ext4 does not reuse an inode freed in the last 60 s (360 s while its inode
 *   table block is dirty): each new file scans, from the start of its block group, past every such
 *   free inode (`recently_deleted()` in fs/ext4/ialloc.c, ~40 % of a slow sed's samples in `perf`).
 *   sed -i makes one file per target, so it pays for whatever was removed near its tree within the
 *   minute — a bench's previous round, another engineer's test, its own renames from an earlier
 *   clock second: 20,000 files removed in the tree's folders a second before took sed from
 *   0.35 s to 3.3–3.7 s of system CPU.
 * - Without a journal, a freed block is discarded at once and the unlink waits for the device:
 *   renaming over (or removing) files whose data is on disk costs a round trip each — sed on a
 *   flushed tree took 9–15 s of wall time at load 20–30 for 0.7–2.4 s of CPU. Files written seconds
 *   ago (delayed allocation) have no blocks yet and free for nothing.
 */

/** Linux reports children's CPU in clock ticks (USER_HZ, 100 on every Linux we run on). */
const CLOCK_TICKS_PER_S = 100;

/** User and system CPU seconds of this process and its finished children (git, grep, sed, verifiers). */
export interface Cpu {
  user: number;
  sys: number;
}

export function cpuNow(): Cpu {
  const own = process.cpuUsage();
  let cutime = 0;
  let cstime = 0;
  try {
    // /proc/self/stat: after the ")" closing the command name, fields 14 and 15 are cutime, cstime.
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    cutime = Number(f[13]) / CLOCK_TICKS_PER_S;
    cstime = Number(f[14]) / CLOCK_TICKS_PER_S;
  } catch {
    // not Linux: this process's own CPU only
  }
  return { user: own.user / 1e6 + cutime, sys: own.system / 1e6 + cstime };
}

export function cpuSince(from: Cpu): Cpu {
  const now = cpuNow();
  return { user: now.user - from.user, sys: now.sys - from.sys };
}

/**
 * The filesystem under `dir` as far as these habits go: type, device, journal, discard. Read from
 * /proc and /sys (no privileges); "unknown" where they do not say.
 */
export function diskFacts(dir: string): string {
  try {
    const dev = fs.statSync(dir).dev;
    const [major, minor] = [Math.floor(dev / 256) & 0xfff, (dev & 0xff) | ((dev >> 12) & 0xfff00)];
    const line = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[2] === `${major}:${minor}`);
    if (!line) return 'filesystem unknown';
    const [before, after] = line.split(' - ');
    const [fstype, source] = after!.split(' ');
    const opts = `${before!.split(' ')[5]},${after!.split(' ')[2]}`;
    if (fstype !== 'ext4') return `${fstype} on ${source}`;
    const name = source!.replace(/^\/dev\//, '');
    let journal = 'journal unknown';
    try {
      // The journal thread's name, or "<none>" on a filesystem without one.
      const task = fs.readFileSync(`/sys/fs/ext4/${name}/journal_task`, 'utf8').trim();
      journal = task && task !== '<none>' ? 'with a journal' : 'no journal';
    } catch {
      // older kernels have no journal_task
    }
    return `ext4 on ${source}, ${journal}, ${opts.split(',').includes('discard') ? 'discard' : 'no discard'}`;
  } catch {
    return 'filesystem unknown';
  }
}
