import fs from 'node:fs';
import { mark } from './stages';

/**
 * The originals an apply renames over, held open until its caller is done with the tree
 * (atomic-apply.ts). Not a backup — git's objects are — but where the old files' blocks are freed:
 * a rename over a file nothing else holds frees that file's blocks inside the rename, and on this
 * machine's ext4 (no journal, mounted with `discard`) that waits for the device's discard of each
 * one. A descriptor held across the rename leaves the rename a name change; the blocks are freed
 * when the descriptor closes, in the background (the thread pool), after the caller's verifier has
 * read the tree. A crash closes them all: nothing to recover.
 */

/** Descriptors this process holds for applies at most, as a share of its limit: sockets, PTYs and pipes need the rest. */
const HELD_SHARE_OF_LIMIT = 0.5;
/** When /proc cannot say the limit: the usual soft limit's share. */
const FALLBACK_LIMIT = 1024;
/** Closes running at once: the thread pool (4 threads) serves the process's other file work meanwhile. */
const CLOSES_AT_ONCE = 2;

let budget: number | null = null;
let heldNow = 0;
/** Closings in flight (a bench counts their CPU; a test waits for them). */
const releasing = new Set<Promise<void>>();

/** This process's limit of open files (node raises the soft limit to the hard one at start). */
function openFilesLimit(): number {
  try {
    const line = fs
      .readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s+/)[3]);
    return Number.isFinite(soft) && soft > 0 ? soft : FALLBACK_LIMIT;
  } catch {
    return FALLBACK_LIMIT;
  }
}

export interface HeldOriginals {
  /** Closes every descriptor, in the background; settles when all are closed. Idempotent. */
  release(): Promise<void>;
}

/**
 * Opens each file (no symlink followed; a file that cannot be opened is not held), as many as the
 * process's budget allows: past it, a rename frees its old file itself, as without holding.
 */
export function holdOriginals(files: string[]): HeldOriginals {
  budget ??= Math.floor(openFilesLimit() * HELD_SHARE_OF_LIMIT);
  const fds: number[] = [];
  for (const file of files) {
    if (heldNow >= budget) break;
    try {
      fds.push(fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK));
      heldNow++;
    } catch {
      // gone, a symlink, or out of descriptors: its rename frees it
    }
  }
  let released: Promise<void> | null = null;
  return {
    release() {
      released ??= closeAll(fds);
      return released;
    },
  };
}

function closeAll(fds: number[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < fds.length) {
      const fd = fds[next++]!;
      await new Promise<void>((resolve) => fs.close(fd, () => resolve()));
      heldNow--;
    }
  };
  const all = Promise.all(Array.from({ length: CLOSES_AT_ONCE }, worker)).then(() => mark(`apply: ${fds.length} old files closed`));
  releasing.add(all);
  void all.then(() => releasing.delete(all));
  return all;
}

/** Settles when every apply of this process so far has closed its originals. */
export async function originalsReleased(): Promise<void> {
  await Promise.all([...releasing]);
}
