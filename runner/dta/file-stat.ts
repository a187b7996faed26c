import fs from 'node:fs';

/**
 * A file's identity as git's index keeps it: size, mtime, ctime and inode. Any write or rename
 * gives a file a new ctime (which no tool sets back) or a new inode, so an equal stat means the
 * bytes are the ones seen when it was taken — unless the file was written within the clock tick
 * the stat was taken in (racyStat below), which git's index calls "racily clean" too.
 */
export type FileStat = [size: number, mtimeMs: number, ctimeMs: number, ino: number];

export function statFields(st: fs.Stats): FileStat {
  return [st.size, st.mtimeMs, st.ctimeMs, st.ino];
}

export function statOf(file: string): FileStat {
  return statFields(fs.statSync(file));
}

export function sameStat(a: FileStat, b: FileStat): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
}

/**
 * File times come from the kernel's coarse clock (a tick, 1–10 ms, behind the real time): a file
 * changed less than a tick before it was read may be changed again after the read with the same
 * ctime (and size). 25 ticks of the coarsest clock: a file older than this at its read has a
 * ctime that any later change moves.
 */
export const RACY_MS = 250;

/** Whether a stat taken at or after `readAt` (epoch ms, Date.now() before the read) cannot vouch for the bytes read (see RACY_MS). */
export function racyStat(stat: FileStat, readAt: number): boolean {
  return stat[2] >= readAt - RACY_MS;
}

/**
 * A file's bytes and its stat taken before they were read (on the same descriptor: the same file).
 * Read up to the end whatever the stat said (a file may grow meanwhile); sized by the stat, so
 * the usual file takes one read and one that finds the end (readFileSync(fd) would stat it again).
 */
export function readWithStat(file: string): { bytes: Buffer; stat: FileStat } {
  const fd = fs.openSync(file, 'r');
  try {
    const st = fs.fstatSync(fd);
    let buf = Buffer.allocUnsafe(st.size + 1);
    let n = 0;
    for (;;) {
      if (n === buf.length) buf = Buffer.concat([buf], buf.length * 2);
      const got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return { bytes: buf.subarray(0, n), stat: statFields(st) };
  } finally {
    fs.closeSync(fd);
  }
}
