import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gitBlobId } from './git-state';
import { mark } from './stages';

/**
 * All files or none. A journal naming every target, its original's git blob id and mode is
 * written (fsynced) first; then each original is kept aside (a hard link), its new content written
 * to a temp file beside it and renamed over it. The apply *commits* when the journal is removed,
 * and only after the new contents are flushed to disk (one syncfs): that flush runs beside the
 * verifier instead of before the renames. Until the commit, a failure rolls every file back from
 * its backup, and a crash (kill -9, or power lost with renames on disk whose data is not) leaves
 * the journal, which recover() — run before anything else touches the tree — rolls back: each
 * target whose bytes are not its original's gets them back, from the backup when the backup still
 * holds them, else from git's objects (the run began on a clean tree). Either way the tree ends
 * byte-identical to before.
 */

export const JOURNAL_FILE = 'journal.json';
/**
 * Failure injection for the crash tests (a documented test hook, off unless set):
 * `throw-after:N` fails after N renames, `kill-after:N` SIGKILLs the process after N renames.
 */
export const FAULT_ENV = 'AV_DTA_FAULT';

interface JournalEntry {
  rel: string;
  backup: string;
  tmp: string;
  /**
   * The original's git blob id. A backup is a hard link to the original's inode, so anything that
   * wrote into that inode in place before the rename (not through a rename) changed the backup
   * too; and before the commit's flush a crash of the machine may leave a backup missing or torn.
   * A restore takes a backup only when its bytes have this id, else the blob from git's objects
   * (the run began on a clean tree, so the original is there). Absent in journals of older runners.
   */
  blob?: string;
  /** The original's mode (permission bits), for a restore without a backup to take it from. */
  mode?: number;
}
interface Journal {
  run_id: string;
  root: string;
  entries: JournalEntry[];
}

/** Journal folders of applies in this process that have not committed: recover() leaves them alone. */
const inFlight = new Set<string>();

function writeDurable(file: string, data: string | Buffer, mode?: number): void {
  const fd = fs.openSync(file, 'w', mode ?? 0o644);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A directory's entries (a rename into it) made durable. */
function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The new contents flushed with one syncfs (`sync -f`) instead of an fsync per file: on a
 * 5,000-file apply that is one flush instead of 5,000. Where `sync -f` is missing, per file.
 */
async function flushAll(dir: string, files: string[]): Promise<void> {
  try {
    await promisify(execFile)('sync', ['-f', dir]);
  } catch {
    for (const f of files) {
      const fh = await fs.promises.open(f, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
  }
}

/**
 * The original kept aside: a hard link to its inode (one metadata operation; renaming the new
 * content over the target leaves the old inode, and so the link, untouched), or a copy where a
 * link is impossible (another filesystem); a torn copy is caught by the journal's blob id.
 * On this machine's loaded filesystem the copies were a third of a 5,000-file apply. The link is
 * also what keeps the renames cheap: without it each rename frees the old inode's blocks itself
 * (11 s for 5,000 renames at load 11 on this ext4 with `discard`, against 2–5 s with the links),
 * and restoring from git's objects instead was tried and reverted for that.
 */
function keepOriginal(target: string, backup: string): void {
  try {
    fs.linkSync(target, backup);
  } catch {
    fs.writeFileSync(backup, fs.readFileSync(target));
  }
}

function fault(renamed: number): void {
  const spec = process.env[FAULT_ENV];
  if (!spec) return;
  const [kind, n] = spec.split(':');
  if (Number(n) !== renamed) return;
  if (kind === 'kill-after') process.kill(process.pid, 'SIGKILL');
  if (kind === 'throw-after') throw new Error(`injected failure after ${renamed} renames (${FAULT_ENV})`);
}

/** What an apply hands back once every file is in place. */
export interface Applied {
  /**
   * Settles when the new contents are on disk and the journal is gone — the commit point. Rejects
   * when they cannot be flushed, after rolling every file back (the tree is as before).
   */
  committed: Promise<void>;
  /** Settles (never rejects) when the run's folder is gone too: after the commit, its backups are removed. */
  cleaned: Promise<void>;
}

/**
 * Returns once every file is in place (the renames done, not yet committed: see Applied).
 * `originals`, when given, are the targets' current bytes (read by the caller), for the journal's blob ids.
 * `journalDir` is outside the tree (the worktree's git dir): it survives a crash, never gets committed.
 */
export function applyAtomic(root: string, journalDir: string, runId: string, changes: ReadonlyMap<string, string>, originals?: ReadonlyMap<string, Buffer>): Applied {
  const dir = path.join(journalDir, runId);
  fs.mkdirSync(path.join(dir, 'backup'), { recursive: true });
  inFlight.add(dir);
  // The originals' bytes: those the caller just read and checked, else read here (page cache).
  const entries: JournalEntry[] = [...changes.keys()].map((rel, i) => {
    const target = path.join(root, rel);
    return { rel, backup: path.join(dir, 'backup', String(i)), tmp: `${target}.dta-${runId}.tmp`, blob: gitBlobId(originals?.get(rel) ?? fs.readFileSync(target)), mode: fs.statSync(target).mode & 0o7777 };
  });
  const journal: Journal = { run_id: runId, root, entries };
  // The journal comes first and durably (its name too), so a crash at any later point knows every
  // target to restore and every temp to clean up.
  writeDurable(path.join(dir, `${JOURNAL_FILE}.tmp`), JSON.stringify(journal));
  fs.renameSync(path.join(dir, `${JOURNAL_FILE}.tmp`), path.join(dir, JOURNAL_FILE));
  syncDir(dir);
  mark('apply: journal written');
  let renamed = 0;
  // Read once per apply (it is the process's, and only this call's files are made under it).
  const umask = process.umask();
  const undo = (err: unknown): never => {
    rollback(journal);
    fs.rmSync(dir, { recursive: true, force: true });
    inFlight.delete(dir);
    throw err;
  };
  try {
    for (const e of entries) {
      keepOriginal(path.join(root, e.rel), e.backup);
      fs.writeFileSync(e.tmp, changes.get(e.rel)!, { mode: e.mode });
      // The create mode passes through the umask: a chmod only where it took bits away.
      if (e.mode! & umask) fs.chmodSync(e.tmp, e.mode!);
    }
    mark('apply: originals kept, temps written');
    for (const e of entries) {
      fs.renameSync(e.tmp, path.join(root, e.rel));
      renamed++;
      fault(renamed);
    }
  } catch (err) {
    undo(err);
  }
  // Every file is in place for the verifier to read; the flush that makes them durable runs beside
  // it. Only then is the journal removed: a crash before that point rolls everything back.
  const committed = flushAll(root, entries.map((e) => path.join(root, e.rel))).then(
    () => {
      mark('apply: flushed, committed');
      fs.rmSync(path.join(dir, JOURNAL_FILE));
      inFlight.delete(dir);
    },
    (err: unknown) => undo(err),
  );
  // Removing the backups frees the old files' blocks, the slowest calls of an apply on a busy disk
  // (10 s of 14 s for 5,000 files at load 14), so it runs beside the verification; a crash
  // meanwhile leaves a folder without a journal, which the next recover() deletes.
  const cleaned = committed.then(
    () => {
      const done = `${dir}.done`;
      fs.renameSync(dir, done);
      // A removal that fails leaves a folder the next recover() deletes: never an error of the run.
      return fs.promises.rm(done, { recursive: true, force: true });
    },
    () => undefined,
  ).catch(() => undefined);
  return { committed, cleaned };
}

/** The original's bytes, checked against the journal's blob id: the backup's, else git's blob. */
function originalOf(j: Journal, e: JournalEntry): Buffer | null {
  let backup: Buffer | null = null;
  try {
    backup = fs.readFileSync(e.backup);
  } catch {
    backup = null;
  }
  if (backup && (!e.blob || gitBlobId(backup) === e.blob)) return backup;
  if (!e.blob) return null;
  try {
    return execFileSync('git', ['cat-file', 'blob', e.blob], { cwd: j.root, maxBuffer: 1024 * 1024 * 1024 });
  } catch {
    return null;
  }
}

/** Whether the target holds its original's bytes already (never renamed over). */
function untouched(target: string, e: JournalEntry): boolean {
  if (!e.blob) return false;
  try {
    return gitBlobId(fs.readFileSync(target)) === e.blob;
  } catch {
    return false;
  }
}

function rollback(j: Journal): void {
  const lost: string[] = [];
  for (const e of j.entries) {
    fs.rmSync(e.tmp, { force: true });
    const target = path.join(j.root, e.rel);
    // A journal of an older runner has no blob id: its missing backup means "never renamed".
    if (e.blob ? untouched(target, e) : !fs.existsSync(e.backup)) continue;
    const original = originalOf(j, e);
    if (!original) {
      lost.push(e.rel);
      continue;
    }
    // Write then rename: a crash during the rollback leaves the journal for the next recover().
    const restoring = `${target}.dta-restore.tmp`;
    let mode = e.mode;
    try {
      mode ??= fs.statSync(e.backup).mode & 0o7777;
    } catch {
      mode ??= 0o644;
    }
    fs.writeFileSync(restoring, original, { mode });
    fs.chmodSync(restoring, mode); // the umask must not narrow the original mode
    fs.renameSync(restoring, target);
  }
  if (lost.length) throw new Error(`cannot restore ${lost.length} files: their backups are gone or changed and git has no blob of the original (${lost.slice(0, 5).join(', ')}); the journal is kept`);
}

/** Rolls back every apply a crash left half-done (not this process's own, still running); returns the run ids it restored. */
export function recover(journalDir: string): string[] {
  if (!fs.existsSync(journalDir)) return [];
  const restored: string[] = [];
  for (const name of fs.readdirSync(journalDir).sort()) {
    const dir = path.join(journalDir, name);
    if (inFlight.has(dir)) continue;
    const file = path.join(dir, JOURNAL_FILE);
    if (fs.existsSync(file)) {
      const j = JSON.parse(fs.readFileSync(file, 'utf8')) as Journal;
      rollback(j);
      restored.push(j.run_id);
    }
    // Without a journal the renames never started, or the apply committed: only temps and backups to remove.
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return restored;
}
