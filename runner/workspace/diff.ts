import fs from 'node:fs';
import path from 'node:path';
import { git } from './git';

/** DiffSummarySchema's limit on files per event. */
export const DIFF_MAX_FILES = 5000;
/** Untracked files larger than this are not read to count lines; they are reported like binaries (null counts). */
export const UNTRACKED_COUNT_MAX_BYTES = 8 * 1024 * 1024;
/**
 * All untracked files of one summary together are read up to this much; past it their counts are
 * null. An agent that drops a dependency tree into an unignored folder must not make every
 * summary read hundreds of MB.
 */
export const UNTRACKED_COUNT_MAX_TOTAL_BYTES = 64 * 1024 * 1024;
/** Git's own heuristic: a NUL byte in the first 8 000 bytes means binary. */
const BINARY_SNIFF_BYTES = 8000;

export interface DiffFile {
  path: string;
  /** null for binary files. */
  added: number | null;
  removed: number | null;
}

/** Lines of a text file (a last line without "\n" counts), or null for a binary or huge one. */
export async function countLines(file: string): Promise<number | null> {
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(file);
  } catch {
    return null;
  }
  if (!st.isFile() || st.size > UNTRACKED_COUNT_MAX_BYTES) return null;
  const buf = await fs.promises.readFile(file);
  if (buf.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return null;
  if (buf.length === 0) return 0;
  let n = 0;
  for (const b of buf) if (b === 0x0a) n++;
  return buf[buf.length - 1] === 0x0a ? n : n + 1;
}

/** Parses `git diff --numstat -z --no-renames`: "added\tremoved\tpath\0", "-\t-\tpath\0" for binaries. */
export function parseNumstat(out: string): DiffFile[] {
  const files: DiffFile[] = [];
  for (const rec of out.split('\0')) {
    if (!rec) continue;
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]+)$/.exec(rec);
    if (!m) continue;
    files.push({ path: m[3], added: m[1] === '-' ? null : Number(m[1]), removed: m[2] === '-' ? null : Number(m[2]) });
  }
  return files;
}

/**
 * What the session changed relative to the commit its worktree started from: committed, staged and
 * unstaged changes (`git diff <base>` compares the working tree with it) plus untracked files that
 * are not ignored, whose lines count as added. Sorted by path.
 */
export async function computeDiff(worktree: string, baseSha: string): Promise<DiffFile[]> {
  const numstat = await git(['diff', '--numstat', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', baseSha, '--'], {
    cwd: worktree,
    what: 'diff',
  });
  const files: Array<DiffFile & { untracked?: boolean }> = parseNumstat(numstat);
  const untracked = await git(['ls-files', '--others', '--exclude-standard', '-z'], { cwd: worktree, what: 'ls-files' });
  for (const rel of untracked.split('\0')) if (rel) files.push({ path: rel, added: null, removed: null, untracked: true });
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // Only the files that fit in the event are read.
  const kept = files.slice(0, DIFF_MAX_FILES);
  let budget = UNTRACKED_COUNT_MAX_TOTAL_BYTES;
  for (const f of kept) {
    if (!f.untracked) continue;
    delete f.untracked;
    const abs = path.join(worktree, f.path);
    const size = await fs.promises.stat(abs).then((st) => st.size, () => 0);
    if (size > budget) continue;
    budget -= size;
    const lines = await countLines(abs);
    f.added = lines;
    f.removed = lines === null ? null : 0;
  }
  return kept;
}

/**
 * Puts one path of a read-only worktree back as it is in `baseSha`: a changed or deleted tracked
 * file is checked out again, a new file is removed. Returns true when something had to be undone
 * (so the revert's own write, seen by the watcher, does not count as a second violation).
 */
export async function revertPath(worktree: string, baseSha: string, rel: string): Promise<boolean> {
  const abs = path.join(worktree, rel);
  if (!abs.startsWith(worktree + path.sep)) return false;
  const inBase = (await git(['ls-tree', '--name-only', '-z', baseSha, '--', rel], { cwd: worktree, what: 'ls-tree' })).split('\0').includes(rel);
  let exists = true;
  try {
    await fs.promises.lstat(abs);
  } catch {
    exists = false;
  }
  if (!inBase) {
    if (!exists) return false;
    await fs.promises.rm(abs, { recursive: true, force: true });
    return true;
  }
  if (exists) {
    const [current, original] = await Promise.all([
      git(['hash-object', '--', rel], { cwd: worktree, what: 'hash-object' }).catch(() => ''),
      git(['rev-parse', `${baseSha}:${rel}`], { cwd: worktree, what: 'rev-parse' }),
    ]);
    if (current.trim() === original.trim()) return false;
    // checkout cannot replace a file the runner itself made read-only.
    await fs.promises.chmod(abs, 0o644).catch(() => undefined);
  }
  await git(['checkout', baseSha, '--', rel], { cwd: worktree, what: 'checkout' });
  return true;
}
