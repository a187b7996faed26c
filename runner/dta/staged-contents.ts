import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { sameStat, statOf, type FileStat } from './file-stat';
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
/** Files per message from the staging thread: what the apply can take grows in steps this size. */
const FILES_PER_MESSAGE = 50;

// Plain JavaScript evaluated in the thread (no loader there, under tsx or node alike). Each content
// as its target's mode, its stat right after the write and its sha256, sent back in batches.
// `control`: [0] set stops it at the next file; [1] the next index it takes; it writes no index
// from [2] on (an apply writing the last ones itself lowers it).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
try { fs.writeFileSync('/proc/thread-self/comm', 'av-dta-stage'); } catch {}
const { root, dir, changes, umask, perMessage, control } = workerData;
const ctl = new Int32Array(control);
let batch = [];
try {
  for (;;) {
    const n = Atomics.add(ctl, 1, 1);
    if (Atomics.load(ctl, 0) !== 0 || n >= Atomics.load(ctl, 2)) break;
    const [rel, text] = changes[n];
    const mode = fs.statSync(path.join(root, rel)).mode & 0o7777;
    const file = path.join(dir, String(n));
    fs.writeFileSync(file, text, { mode });
    // The create mode passes through the umask: a chmod only where it took bits away.
    if (mode & umask) fs.chmodSync(file, mode);
    const st = fs.statSync(file);
    batch.push([rel, file, [st.size, st.mtimeMs, st.ctimeMs, st.ino], mode, crypto.createHash('sha256').update(text).digest('hex')]);
    if (batch.length === perMessage) {
      parentPort.postMessage(batch);
      batch = [];
    }
  }
} catch (err) {
  // Stopped, or a write failed: what is written so far is taken, the apply writes the rest.
}
parentPort.postMessage(batch);
parentPort.postMessage('done');
`;

/** A staged file as the thread reports it: [rel, file, stat, mode, sha256]. */
type StagedMessage = [string, string, FileStat, number, string];

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
  /**
   * For an apply that writes the last contents itself while the rest are staged (from the end, on
   * its own thread): whether the staging has taken the content at `index` (in the order of the
   * changes), and, if not, keeps it from taking it or any after it. Both may write the one content
   * they meet at: the apply then renames its own.
   */
  leave(index: number): boolean;
}

/**
 * Starts writing each new content to `<stateDir>/staged/<id>/<n>` with its target's mode, in a
 * thread of its own: the dry-run answers when its verifier does, not when this is done (on this
 * machine's shared disk 5,000 small files took 0.2 s or 2 s of system CPU, as the neighbours'
 * writes went), and the runner's thread stays free meanwhile — for the dry-run's answer, and for
 * the apply that takes these files and prepares beside the writing. Null when it cannot start
 * (another filesystem than the tree's, no thread); a write that fails ends it, and the apply
 * writes the rest as before.
 */
export function stageContents(root: string, stateDir: string, id: string, changes: ReadonlyMap<string, string>): StagedContents | null {
  const dir = path.join(stateDir, STAGED_DIR, id);
  const control = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
  const ctl = new Int32Array(control);
  let worker: Worker;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // A rename cannot cross filesystems (EXDEV): the apply would fail half-way.
    if (fs.statSync(dir).dev !== fs.statSync(root).dev) throw new Error('another filesystem');
    Atomics.store(ctl, 2, changes.size);
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { root, dir, changes: [...changes], umask: process.umask(), perMessage: FILES_PER_MESSAGE, control }, execArgv: [] });
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
  const files: StagedContents['files'] = new Map();
  const done = new Promise<void>((resolve) => {
    worker.on('message', (m: StagedMessage[] | 'done') => {
      if (m === 'done') {
        mark(`dry-run: contents staged (${files.size})`);
        return resolve();
      }
      for (const [rel, file, stat, mode, sha256] of m) files.set(rel, { file, stat, mode, sha256 });
    });
    // A thread that failed or ended without its last message: what it reported is what is staged.
    worker.on('error', () => resolve());
    worker.on('exit', () => resolve());
  });
  const leave = (index: number): boolean => {
    if (Atomics.load(ctl, 1) > index) return false;
    Atomics.store(ctl, 2, index);
    return true;
  };
  return { dir, files, done, stop: () => Atomics.store(ctl, 0, 1), leave };
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
