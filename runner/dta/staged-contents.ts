import fs from 'node:fs';
import path from 'node:path';
import { sameStat, statOf, type FileStat } from './file-stat';
import { sha256 } from './git-state';
import { mark } from './stages';

/**
 * A dry-run's new contents written ahead, for the apply its gate may allow in the same process
 * (run-service.ts, session-dta.ts): the dry-run writes them while it waits for its verifier's check
 * of the proposal — the runner's core is idle then — and on, in the background, until the apply
 * is ready to rename them (atomic-apply.ts), which renames them into place instead of writing a
 * temp file per target (5,000 files: ~0.25 s CPU, quiet). Not flushed here: the apply flushes the
 * tree once, after its renames, beside its verifier (and the kernel writes them back within
 * half a minute while a gate waits for a person).
 *
 * Only a file exactly as the dry-run wrote it is taken: its size, mtime, ctime and inode as they
 * were right after the write (any write or rename gives a file a new ctime or inode, as git's index
 * relies on). Anything else — the folder gone, a file changed, another filesystem than the tree's —
 * and the apply writes that target's temp from the proposal in memory, as it always did. The
 * verifier's hash of every applied file against the proposal holds either way.
 */

/** Inside the run state folder (the worktree's git dir: same filesystem as the tree, never committed). */
export const STAGED_DIR = 'staged';
/**
 * Files written between two turns of the event loop: the verifier's request (~100 KB for 5,000 paths)
 * leaves through a 64 KB pipe and its answer is read meanwhile, and an apply that takes these files
 * goes on with its own steps (its git processes answer) between batches: a batch is 5–50 ms.
 */
const FILES_PER_TURN = 50;

export interface StagedContents {
  dir: string;
  /**
   * Per changed path staged so far: the staged file, its stat right after the write, the mode it
   * was given, and the sha256 of the content (the apply's claim to its verifier, hashed here while
   * the dry-run waits rather than on the apply's path).
   */
  files: Map<string, { file: string; stat: FileStat; mode: number; sha256: string }>;
  /** Settles when the writing has ended (all written, stopped, or failed). */
  done: Promise<void>;
  /** Ends the writing at the next file (the apply takes what is written by then). */
  stop(): void;
}

/**
 * Starts writing each new content to `<stateDir>/staged/<id>/<n>` with its target's mode, a batch
 * per turn of the event loop, in the background: the dry-run answers when its verifier does, not
 * when this is done (on this machine's shared disk 5,000 small files took 0.2 s or 2 s of system
 * CPU, as the neighbours' writes went). Null when it cannot start (another filesystem than the
 * tree's); a write that fails ends it, and the apply writes the rest as before.
 */
export function stageContents(root: string, stateDir: string, id: string, changes: ReadonlyMap<string, string>): StagedContents | null {
  const dir = path.join(stateDir, STAGED_DIR, id);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // A rename cannot cross filesystems (EXDEV): the apply would fail half-way.
    if (fs.statSync(dir).dev !== fs.statSync(root).dev) throw new Error('another filesystem');
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
  let stopped = false;
  const files: StagedContents['files'] = new Map();
  const write = async (): Promise<void> => {
    const umask = process.umask();
    let n = 0;
    for (const [rel, text] of changes) {
      if (stopped) return;
      const mode = fs.statSync(path.join(root, rel)).mode & 0o7777;
      const file = path.join(dir, String(n));
      fs.writeFileSync(file, text, { mode });
      // The create mode passes through the umask: a chmod only where it took bits away.
      if (mode & umask) fs.chmodSync(file, mode);
      files.set(rel, { file, stat: statOf(file), mode, sha256: sha256(text) });
      if (++n % FILES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    mark('dry-run: contents staged');
  };
  // A write that fails ends it: the apply writes the rest.
  const done = write().catch(() => undefined);
  return { dir, files, done, stop: () => (stopped = true) };
}

/**
 * The staged file for `rel`, given its target's mode now: only when it is exactly as the dry-run
 * wrote it (else null). A mode changed since is set on the file (after the check: a chmod changes its ctime).
 */
export function stagedFile(s: StagedContents, rel: string, mode: number): string | null {
  const e = s.files.get(rel);
  if (!e) return null;
  try {
    if (!sameStat(statOf(e.file), e.stat)) return null;
    if (mode !== e.mode) fs.chmodSync(e.file, mode);
  } catch {
    return null;
  }
  return e.file;
}

/** Removes what is staged (the apply is done, or its proposal is dropped). */
export function discardStaged(s: StagedContents | null | undefined): void {
  if (!s) return;
  s.stop();
  // After the writing has ended: a batch still to come would write into a folder removed under it.
  void s.done.then(() => fs.rmSync(s.dir, { recursive: true, force: true }));
}

/**
 * Staged folders older than `maxAgeMs` that no proposal kept here holds (`live`): a runner that
 * ended with proposals kept leaves them behind. A younger one may be another process's.
 */
export function sweepStaged(stateDir: string, maxAgeMs: number, live: ReadonlySet<string>, now = Date.now()): void {
  const parent = path.join(stateDir, STAGED_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const dir = path.join(parent, name);
    try {
      if (!live.has(dir) && now - fs.statSync(dir).mtimeMs > maxAgeMs) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
  }
}
