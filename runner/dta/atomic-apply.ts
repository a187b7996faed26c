import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * All files or none. The originals' modes and git blob ids go into a journal, written and flushed
 * once; then every new content is written to a temp file beside its target and the temps are
 * renamed over the targets. A failure half-way puts every original back; a crash half-way (kill -9)
 * leaves the journal, and recover() — run before anything else touches the tree — puts every
 * original back. Either way the tree ends byte-identical to before.
 *
 * Where the originals come from: a run starts on a clean tree, so an original's bytes are, as a
 * rule, a blob in git's objects (its id is in the journal); only an original git lacks (a checkout
 * filter or an eol conversion makes the file differ from its blob while status is clean) is kept
 * aside, as a hard link, before anything is renamed. Keeping a link of every file, and removing
 * the links afterwards, were 10,000 of a 5,000-file apply's metadata calls.
 *
 * Durability: the journal is on disk (fsync of it and its folder) before the first rename, and it
 * is removed only after one syncfs of the tree's filesystem, which the caller awaits beside the
 * verification rather than before the renames. So after a power loss either the journal is there
 * (recover() restores every original from git's objects or its link, whatever state the files
 * were left in) or the new contents and renames were on disk already. A crash of the process
 * alone loses nothing of the page cache: the same holds without the flush.
 */

export const JOURNAL_FILE = 'journal.json';
/**
 * Failure injection for the crash tests (a documented test hook, off unless set):
 * `throw-after:N` fails after N renames, `kill-after:N` SIGKILLs the process after N renames.
 */
export const FAULT_ENV = 'AV_DTA_FAULT';

interface JournalEntry {
  rel: string;
  tmp: string;
  /** The original's git blob id: the original is restored from git's objects by it. */
  blob?: string;
  /** The original's permission bits (journals of older runs have none: the backup's are taken). */
  mode?: number;
  /**
   * Only for an original git has no blob of: a hard link to its inode (renaming the new content
   * over the target leaves the old inode, and so the link, untouched), or a copy where a link is
   * impossible. Anything that wrote into that inode in place changed the link too, so a restore
   * checks it against `blob` and takes git's blob when it does not match.
   */
  backup?: string;
}
interface Journal {
  run_id: string;
  root: string;
  entries: JournalEntry[];
}

/** Journal folders of applies in this process still flushing: recover() leaves them alone. */
const active = new Set<string>();

function writeDurable(file: string, data: string | Buffer, mode?: number): void {
  const fd = fs.openSync(file, 'w', mode ?? 0o644);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A folder's entries (a rename into it) on disk. */
function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Everything written to the tree's filesystem on disk, with one syncfs (`sync -f`) instead of an
 * fsync per file: on a 5,000-file apply one call instead of 5,000. Where `sync -f` is missing, per file.
 */
async function flushAll(dir: string, files: string[]): Promise<void> {
  const synced = await new Promise<boolean>((resolve) => execFile('sync', ['-f', dir], (err) => resolve(!err)));
  if (synced) return;
  for (const f of files) {
    const h = await fs.promises.open(f, 'r').catch(() => null);
    if (!h) continue;
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  }
}

function flushAllSync(dir: string, files: string[]): void {
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

/** Kept aside: a link where possible, else a copy written as `.tmp` and renamed once flushed (a torn copy never has the backup's name). */
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
  if (kind === 'throw-after') throw new Error(`injected failure after ${renamed} renames (${FAULT_ENV})`);
}

/** git's id of a blob: sha1 over "blob <size>\0" and the bytes. */
export function gitBlobId(bytes: Buffer): string {
  return crypto.createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** Blob ids git's objects hold, asked in one `git cat-file --batch-check`. */
function blobsInGit(root: string, ids: string[]): Set<string> {
  const have = new Set<string>();
  if (!ids.length) return have;
  try {
    const out = execFileSync('git', ['cat-file', '--batch-check'], { cwd: root, input: `${ids.join('\n')}\n`, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    for (const line of out.split('\n')) {
      const [id, type] = line.split(' ');
      if (id && type === 'blob') have.add(id);
    }
  } catch {
    // git unusable: every original is kept aside instead.
  }
  return have;
}

/** Blobs' bytes by id, read in one `git cat-file --batch` (missing ones are left out). */
function readGitBlobs(root: string, ids: string[]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (!ids.length) return out;
  let buf: Buffer;
  try {
    buf = execFileSync('git', ['cat-file', '--batch'], { cwd: root, input: `${ids.join('\n')}\n`, maxBuffer: 4 * 1024 * 1024 * 1024 });
  } catch {
    return out;
  }
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf(0x0a, at);
    if (nl < 0) break;
    const [id, type, size] = buf.subarray(at, nl).toString().split(' ');
    at = nl + 1;
    if (type === 'missing' || size === undefined) continue;
    out.set(id!, buf.subarray(at, at + Number(size)));
    at += Number(size) + 1;
  }
  return out;
}

/**
 * Returns once every file is in place; the promise it returns settles when the apply is durable
 * and its journal gone (the caller awaits it before answering; see "Durability" above).
 * `originals`, when given, are the targets' current bytes (read by the caller), for the journal's blob ids.
 * `journalDir` is outside the tree (the worktree's git dir): it survives a crash, never gets committed.
 */
export function applyAtomic(root: string, journalDir: string, runId: string, changes: ReadonlyMap<string, string>, originals?: ReadonlyMap<string, Buffer>): Promise<void> {
  const dir = path.join(journalDir, runId);
  fs.mkdirSync(dir, { recursive: true });
  const entries: JournalEntry[] = [...changes.keys()].map((rel) => {
    const target = path.join(root, rel);
    const mode = fs.statSync(target).mode & 0o7777;
    // The originals' bytes: those the caller just read and checked, else read here (page cache).
    return { rel, tmp: `${target}.dta-${runId}.tmp`, blob: gitBlobId(originals?.get(rel) ?? fs.readFileSync(target)), mode };
  });
  const inGit = blobsInGit(root, entries.map((e) => e.blob!));
  const copied: JournalEntry[] = [];
  entries.forEach((e, i) => {
    if (inGit.has(e.blob!)) return;
    fs.mkdirSync(path.join(dir, 'backup'), { recursive: true });
    e.backup = path.join(dir, 'backup', String(i));
    if (keepOriginal(path.join(root, e.rel), e.backup) === 'copied') copied.push(e);
  });
  const journal: Journal = { run_id: runId, root, entries };
  // The journal comes first, so a crash at any later point knows every temp to clean up and every original.
  writeDurable(path.join(dir, `${JOURNAL_FILE}.tmp`), JSON.stringify(journal));
  fs.renameSync(path.join(dir, `${JOURNAL_FILE}.tmp`), path.join(dir, JOURNAL_FILE));
  syncDir(dir);
  active.add(dir);
  let renamed = 0;
  // Read once per apply (it is the process's, and only this call's files are made under it).
  const umask = process.umask();
  try {
    for (const e of entries) {
      fs.writeFileSync(e.tmp, changes.get(e.rel)!, { mode: e.mode });
      // The create mode passes through the umask: a chmod only where it took bits away.
      if (e.mode! & umask) fs.chmodSync(e.tmp, e.mode!);
    }
    if (copied.length) {
      // A copied backup exists under its name only complete (written, flushed, renamed): rollback never restores a torn copy.
      flushAllSync(root, copied.map((e) => `${e.backup}.tmp`));
      for (const e of copied) fs.renameSync(`${e.backup}.tmp`, e.backup!);
    }
    for (const e of entries) {
      fs.renameSync(e.tmp, path.join(root, e.rel));
      renamed++;
      fault(renamed);
    }
  } catch (err) {
    try {
      rollback(journal);
      fs.rmSync(dir, { recursive: true, force: true });
    } finally {
      active.delete(dir);
    }
    throw err;
  }
  return (async () => {
    try {
      await flushAll(root, entries.map((e) => path.join(root, e.rel)));
      // Done and on disk: without its journal the apply is complete to recover(). A removal that
      // fails leaves a folder the next recover() deletes: never an error of the run.
      fs.rmSync(path.join(dir, JOURNAL_FILE));
      await fs.promises.rm(dir, { recursive: true, force: true });
    } catch {
      // A journal that could not be removed is rolled back by the next recover(): the run's own
      // answer stands as verified, and the next run says what it restored.
    } finally {
      active.delete(dir);
    }
  })();
}

/** The original's bytes: its backup if it has one that still is the original, else git's blob. */
function originalOf(e: JournalEntry, blobs: ReadonlyMap<string, Buffer>): Buffer | null {
  if (e.backup && fs.existsSync(e.backup)) {
    const backup = fs.readFileSync(e.backup);
    if (!e.blob || gitBlobId(backup) === e.blob) return backup;
  }
  return (e.blob && blobs.get(e.blob)) || null;
}

function rollback(j: Journal): void {
  const lost: string[] = [];
  const blobs = readGitBlobs(
    j.root,
    j.entries.filter((e) => e.blob).map((e) => e.blob!),
  );
  for (const e of j.entries) {
    fs.rmSync(e.tmp, { force: true });
    // A journal of an older run kept a backup of every file; one whose backup is gone never got that far.
    if (e.mode === undefined && !(e.backup && fs.existsSync(e.backup))) continue;
    const original = originalOf(e, blobs);
    if (!original) {
      lost.push(e.rel);
      continue;
    }
    // Write then rename: a crash during the rollback leaves the journal for the next recover().
    const target = path.join(j.root, e.rel);
    const restoring = `${target}.dta-restore.tmp`;
    const mode = e.mode ?? fs.statSync(e.backup!).mode & 0o7777;
    fs.writeFileSync(restoring, original, { mode });
    fs.chmodSync(restoring, mode); // the umask must not narrow the original mode
    fs.renameSync(restoring, target);
  }
  if (lost.length) throw new Error(`cannot restore ${lost.length} files: git has no blob of the original and no intact copy is kept (${lost.slice(0, 5).join(', ')}); the journal is kept`);
}

/** Rolls back every apply a crash left half-done; returns the run ids it restored. */
export function recover(journalDir: string): string[] {
  if (!fs.existsSync(journalDir)) return [];
  const restored: string[] = [];
  for (const name of fs.readdirSync(journalDir).sort()) {
    const dir = path.join(journalDir, name);
    // An apply of this process still flushing (its run is verifying): complete, not crashed.
    if (active.has(dir)) continue;
    const file = path.join(dir, JOURNAL_FILE);
    if (fs.existsSync(file)) {
      const j = JSON.parse(fs.readFileSync(file, 'utf8')) as Journal;
      rollback(j);
      restored.push(j.run_id);
    }
    // Without a journal the renames never started (or all were flushed): only copies to clean up.
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return restored;
}
