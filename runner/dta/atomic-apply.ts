import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gitBlobId } from './git-state';
import { mark } from './stages';
import { stagedFile, type StagedContents } from './staged-contents';

/**
 * All files or none. Every new content is written to a temp file beside its target and the
 * original is copied aside, then a journal is written (fsynced), then the temps are renamed over
 * the targets. A failure half-way rolls every renamed file back from its copy; a crash half-way
 * (kill -9) leaves the journal, and recover() — run before anything else touches the tree —
 * puts every original back. Either way the tree ends byte-identical to before.
 */

export const JOURNAL_FILE = 'journal.json';
/**
 * Failure injection for the crash tests (a documented test hook, off unless set):
 * `throw-after:N` fails after N renames, `kill-after:N` SIGKILLs the process after N renames,
 * `stop-after:N` stops it (SIGSTOP) after N renames: an apply in flight, its owner alive.
 */
export const FAULT_ENV = 'AV_DTA_FAULT';

interface JournalEntry {
  rel: string;
  backup: string;
  tmp: string;
  /**
   * The original's git blob id. A backup is a hard link to the original's inode, so anything that
   * wrote into that inode in place before the rename (not through a rename) changed the backup
   * too: a restore first checks the backup against this id, and takes the blob from git's objects
   * (the run began on a clean tree, so the original is there) when it does not match.
   */
  blob?: string;
}
/** What the caller knows of a target's original (kept-proposals.ts): its git blob id and mode, so the apply does not read and stat it again. */
export interface Original {
  blob: string;
  mode: number;
}

interface Journal {
  run_id: string;
  root: string;
  entries: JournalEntry[];
}

function writeDurable(file: string, data: string | Buffer, mode?: number): void {
  const fd = fs.openSync(file, 'w', mode ?? 0o644);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Copies and temps are flushed with one syncfs (`sync -f`) instead of an fsync per file: on a
 * 5,000-file apply that is one flush instead of 10,000. Where `sync -f` is missing, per file.
 */
function flushAll(dir: string, files: string[]): void {
  try {
    execFileSync('sync', ['-f', dir], { stdio: 'ignore' });
  } catch {
    for (const f of files) {
      const fd = fs.openSync(f, 'r');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
  }
}

/**
 * The original kept aside: a hard link to its inode (one metadata operation; renaming the new
 * content over the target leaves the old inode, and so the link, untouched), or a copy where a
 * link is impossible (another filesystem). A copy is written as `.tmp` and renamed once flushed,
 * so a backup exists under its name only complete; a link is complete the moment it exists.
 * On this machine's loaded filesystem the copies were a third of a 5,000-file apply. The link is
 * also what keeps the renames cheap: without it each rename frees the old inode's blocks itself
 * (11 s for 5,000 renames at load 11 on this ext4 with `discard`, against 2–5 s with the links),
 * and restoring from git's objects instead was tried and reverted for that.
 */
function keepOriginal(target: string, backup: string): 'linked' | 'copied' {
  try {
    fs.linkSync(target, backup);
    return 'linked';
  } catch {
    fs.writeFileSync(`${backup}.tmp`, fs.readFileSync(target));
    return 'copied';
  }
}

function fault(renamed: number): void {
  const spec = process.env[FAULT_ENV];
  if (!spec) return;
  const [kind, n] = spec.split(':');
  if (Number(n) !== renamed) return;
  if (kind === 'kill-after') process.kill(process.pid, 'SIGKILL');
  if (kind === 'stop-after') process.kill(process.pid, 'SIGSTOP');
  if (kind === 'throw-after') throw new Error(`injected failure after ${renamed} renames (${FAULT_ENV})`);
}

/**
 * Each apply's folder is named `<run id>@<pid>.<start>`: the process that owns it, with that
 * process's start time (so a pid the system gave to another process since is not taken for the
 * owner). Two runs may apply at once in one worktree (soft locks allow disjoint files), and each
 * run begins with recover(): only folders whose owner is gone are rolled back or removed.
 */
const OWNER_MARK = '@';

/** A process's start, in clock ticks since boot (/proc/<pid>/stat field 22); null where /proc cannot say. */
function processStart(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

const SELF_OWNER = `${process.pid}.${processStart(process.pid) ?? '0'}`;

/** This process's applies whose folders are still in use (in flight, or backups being removed), by folder name. */
const ownFolders = new Set<string>();

/** Whether the apply that owns this folder may still be running (never for a folder named before owners were). */
function ownerAlive(folder: string): boolean {
  const name = folder.endsWith('.done') ? folder.slice(0, -'.done'.length) : folder;
  if (!name.includes(OWNER_MARK)) return false;
  const owner = name.slice(name.lastIndexOf(OWNER_MARK) + 1);
  if (owner === SELF_OWNER) return ownFolders.has(name);
  const [pid, start] = owner.split('.');
  if (!/^[1-9][0-9]*$/.test(pid ?? '')) return false;
  try {
    process.kill(Number(pid), 0);
  } catch (err) {
    // EPERM: a process of another user has that pid, alive.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = processStart(Number(pid));
  return now === null || start === '0' || now === start;
}

/**
 * A finished apply: every file is in place, its originals still linked aside until
 * removeBackups(), which the caller calls once its verifier has read the tree — freeing 5,000 old
 * files' blocks beside the verifier's `git status` and reads slowed them (0.3–0.4 s of wall time
 * for 0.08 s of CPU at load 3). Its promise settles when the backups are gone (backupsRemoved()
 * waits for every removal started). A caller that never calls it leaves a folder without a
 * journal, which recover() deletes once this process is gone.
 */
export interface AppliedFiles {
  removeBackups(): Promise<void>;
}

/**
 * Resolves once every file is in place (or rejects, rolled back: the tree as before).
 * `ready`: what the caller checks beside the apply's own preparation (the tree unchanged since the
 * run began: `git status` in a process of its own, on the other core); nothing in the tree is
 * written or renamed before it resolves, and if it rejects the apply is undone with its reason.
 * `originals`, when given, are the targets' blob ids and modes (checked by the caller), for the journal; else each target is read and stat'ed here.
 * `staged`: the new contents its dry-run wrote ahead, renamed into place where still as written.
 * `journalDir` is outside the tree (the worktree's git dir): it survives a crash, never gets committed.
 */
export async function applyAtomic(root: string, journalDir: string, runId: string, changes: ReadonlyMap<string, string>, originals?: ReadonlyMap<string, Original>, staged?: StagedContents | null, ready?: Promise<unknown>): Promise<AppliedFiles> {
  const name = `${runId}${OWNER_MARK}${SELF_OWNER}`;
  const dir = path.join(journalDir, name);
  ownFolders.add(name);
  try {
    fs.mkdirSync(path.join(dir, 'backup'), { recursive: true });
    return await applyIn(root, dir, runId, changes, originals, staged, ready, () => ownFolders.delete(name));
  } catch (err) {
    ownFolders.delete(name);
    throw err;
  }
}

/** applyAtomic() inside its folder `dir`; `release` once the folder is gone (or left for recover()). */
async function applyIn(root: string, dir: string, runId: string, changes: ReadonlyMap<string, string>, originals: ReadonlyMap<string, Original> | undefined, staged: StagedContents | null | undefined, ready: Promise<unknown> | undefined, release: () => void): Promise<AppliedFiles> {
  // The originals' blob ids and modes: those the caller checked, else read and stat'ed here.
  // A target's new content is its staged file when the dry-run wrote one that is still as written
  // (staged-contents.ts), else a temp file beside it, written below.
  const modes: number[] = [];
  const written = new Set<string>();
  const entries: JournalEntry[] = [...changes.keys()].map((rel, i) => {
    const target = path.join(root, rel);
    const known = originals?.get(rel);
    const mode = known?.mode ?? fs.statSync(target).mode & 0o7777;
    modes.push(mode);
    const ahead = staged ? stagedFile(staged, rel, mode) : null;
    if (ahead) written.add(rel);
    return { rel, backup: path.join(dir, 'backup', String(i)), tmp: ahead ?? `${target}.dta-${runId}.tmp`, blob: known?.blob ?? gitBlobId(fs.readFileSync(target)) };
  });
  const journal: Journal = { run_id: runId, root, entries };
  // The journal comes first, so a crash at any later point knows every temp and copy to clean up.
  writeDurable(path.join(dir, `${JOURNAL_FILE}.tmp`), JSON.stringify(journal));
  fs.renameSync(path.join(dir, `${JOURNAL_FILE}.tmp`), path.join(dir, JOURNAL_FILE));
  mark('apply: journal written');
  let renamed = 0;
  // Read once per apply (it is the process's, and only this call's files are made under it).
  const umask = process.umask();
  try {
    // The originals kept aside (in the journal's folder, outside the tree) while the caller's check runs.
    const copied = entries.filter((e) => keepOriginal(path.join(root, e.rel), e.backup) === 'copied');
    mark('apply: originals kept');
    if (ready) await ready;
    mark('apply: ready');
    entries.forEach((e, i) => {
      if (written.has(e.rel)) return;
      const mode = modes[i]!;
      fs.writeFileSync(e.tmp, changes.get(e.rel)!, { mode });
      // The create mode passes through the umask: a chmod only where it took bits away.
      if (mode & umask) fs.chmodSync(e.tmp, mode);
    });
    mark(`apply: temps written (${written.size} staged ahead)`);
    // Staged files were flushed by their dry-run (a syncfs now finds them clean); the flush still
    // covers them, the backups' links and the temps written here.
    flushAll(root, [...copied.map((e) => `${e.backup}.tmp`), ...entries.map((e) => e.tmp)]);
    // A copied backup exists under its name only complete (written, flushed, renamed): rollback
    // never restores a torn copy.
    for (const e of copied) fs.renameSync(`${e.backup}.tmp`, e.backup);
    mark('apply: flushed');
    for (const e of entries) {
      fs.renameSync(e.tmp, path.join(root, e.rel));
      renamed++;
      fault(renamed);
    }
  } catch (err) {
    rollback(journal, renamed);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // Done: without its journal the apply is complete to recover(), and nothing needs the backups.
  // Removing them frees the old files' blocks, the slowest calls of an apply on a busy disk (10 s
  // of 14 s for 5,000 files at load 14; on this machine's ext4 without a journal each freed block
  // is discarded while the unlink waits), so it runs in the background, when the caller says (after
  // its verifier); a crash meanwhile leaves a folder without a journal, which the next recover() deletes.
  fs.rmSync(path.join(dir, JOURNAL_FILE));
  const done = `${dir}.done`;
  fs.renameSync(dir, done);
  let removal: Promise<void> | null = null;
  return {
    removeBackups() {
      // A removal that fails leaves a folder the next recover() deletes: never an error of the run.
      removal ??= fs.promises
        .rm(done, { recursive: true, force: true })
        .catch(() => undefined)
        .then(() => {
          release();
          mark('apply: backups removed');
        });
      removing.add(removal);
      void removal.then(() => removing.delete(removal!));
      return removal;
    },
  };
}

/** Backups still being removed after their applies answered (this process's). */
const removing = new Set<Promise<void>>();

/** Settles when every apply of this process so far has removed its backups (a bench counts their CPU; a test waits for a tidy git dir). */
export async function backupsRemoved(): Promise<void> {
  await Promise.all([...removing]);
}

/** The original's bytes: the backup if it still is the original, else the blob from git's objects. */
function originalOf(j: Journal, e: JournalEntry): Buffer | null {
  const backup = fs.readFileSync(e.backup);
  if (!e.blob || gitBlobId(backup) === e.blob) return backup;
  try {
    return execFileSync('git', ['cat-file', 'blob', e.blob], { cwd: j.root, maxBuffer: 1024 * 1024 * 1024 });
  } catch {
    return null;
  }
}

/**
 * Puts the originals back. `renamed`: how many entries (in order) had their new content renamed
 * into place, when this process knows (a failure in applyIn); the others' targets were never
 * touched and are left as they are — restoring them would undo whatever changed them meanwhile.
 * A crash's recover() cannot know, and restores every entry.
 */
function rollback(j: Journal, renamed = j.entries.length): void {
  const lost: string[] = [];
  for (const [i, e] of j.entries.entries()) {
    fs.rmSync(e.tmp, { force: true });
    if (i >= renamed || !fs.existsSync(e.backup)) continue;
    const original = originalOf(j, e);
    if (!original) {
      lost.push(e.rel);
      continue;
    }
    // Write then rename: a crash during the rollback leaves the journal for the next recover().
    const target = path.join(j.root, e.rel);
    const restoring = `${target}.dta-restore.tmp`;
    const mode = fs.statSync(e.backup).mode & 0o7777;
    fs.writeFileSync(restoring, original, { mode });
    fs.chmodSync(restoring, mode); // the umask must not narrow the original mode
    fs.renameSync(restoring, target);
  }
  if (lost.length) throw new Error(`cannot restore ${lost.length} files: their backups changed and git has no blob of the original (${lost.slice(0, 5).join(', ')}); the journal is kept`);
}

/**
 * Rolls back every apply a crash left half-done; returns the run ids it restored. Only folders
 * whose owner is gone: another run's apply in flight in this worktree (another process, or this
 * one) is left to finish, its backups to be removed by it.
 */
export function recover(journalDir: string): string[] {
  if (!fs.existsSync(journalDir)) return [];
  const restored: string[] = [];
  for (const name of fs.readdirSync(journalDir).sort()) {
    if (ownerAlive(name)) continue;
    const dir = path.join(journalDir, name);
    const file = path.join(dir, JOURNAL_FILE);
    if (fs.existsSync(file)) {
      const j = JSON.parse(fs.readFileSync(file, 'utf8')) as Journal;
      rollback(j);
      restored.push(j.run_id);
    }
    // Without a journal the renames never started, or all ended: only copies, temps or backups to remove.
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return restored;
}
