import fs from 'node:fs';
import path from 'node:path';
import { holdOriginals, type HeldOriginals } from './atomic-apply-held';
import { flushAll, flushAllAsync, fsyncDir, writeDurable } from './durable';
import { catBlobBytesSync, gitBlobId, regularFile, SYMLINK_MODE, treeAt, type TreeAt } from './git-state';
import { mark } from './stages';
import { stagedFile, type StagedContents } from './staged-contents';

/**
 * All files or none. Every new content is written to a temp file beside its target (or was staged
 * by the dry-run), a journal is written (fsynced, with its folder), then the temps are renamed over
 * the targets, then the new contents are flushed to disk while the caller's verifier reads them;
 * only when that flush is done does the journal go and the apply count as complete. A failure
 * half-way rolls every renamed file back; a crash half-way (kill -9, or the machine) leaves the
 * journal, and recover() — run before anything else touches the tree — puts every original back.
 * Either way the tree ends byte-identical to before.
 *
 * The backup is git's object store: a run starts on a clean tree, so the original of a tracked
 * file whose bytes are HEAD's blob (the journal records each original's blob id and mode) is in
 * git already, and a restore reads it back through one `git cat-file --batch`. No hard link per
 * file and no removal of 5,000 backups afterwards (the old design: 10,000 more metadata operations
 * per 5,000-file apply). Only a file git does not hold as it is in the tree gets a copy kept in the
 * apply's folder: one whose bytes are not HEAD's blob (a clean or smudge filter, autocrlf or
 * another `.gitattributes` conversion: `git status` calls it clean, but its blob is other bytes)
 * or one HEAD does not have (untracked or ignored). A symlink is refused: renaming a file over it
 * would turn the link into a file.
 *
 * Why the new contents need not be on disk before the renames (they were flushed first until
 * issue 15's last stop: up to a second on the apply's path). A restore never reads them: it takes
 * each original from git's objects or a kept copy, by the journal, whatever a target holds. So
 * what must be durable before the first rename is only the journal (and the copies), and what
 * must be durable before the apply is reported complete is the new contents and the renames.
 * The crash points, in order:
 * - before the journal is on disk: nothing in the tree was touched (temps beside the targets are
 *   written only after it, and a staged file lives in the git dir): nothing to restore;
 * - after the journal, before or during the renames: the journal lists every target, and
 *   recover() restores each that does not hold its original (renamed or not);
 * - after every rename, while the flush runs (`kill-in-flush`): the journal is still there —
 *   it goes only after the flush — so recover() restores every target. After a power loss a
 *   renamed target may hold the new bytes, none, or garbage: recover() compares it with the
 *   original's blob id and rewrites it from git either way;
 * - the flush fails (`fail-flush`): this process rolls every file back, the run fails;
 * - after the flush, while the journal is removed: the new contents are on disk, so either
 *   recover() restores the originals (the run never reported success) or finds no journal;
 * - after the journal's removal is on disk: the apply is complete, the run reports it.
 * A run's caller reports the apply (and commits it) only once `durable` has settled.
 */

export const JOURNAL_FILE = 'journal.json';
/** Where the copies of originals git does not hold go, inside the apply's folder. */
const COPIES_DIR = 'copy';
/**
 * Failure injection for the crash tests (a documented test hook, off unless set):
 * `throw-after:N` fails after N renames, `kill-after:N` SIGKILLs the process after N renames,
 * `stop-after:N` stops it (SIGSTOP) after N renames: an apply in flight, its owner alive;
 * `kill-in-flush` SIGKILLs it after every rename, while the new contents are being flushed;
 * `fail-flush` fails that flush (as an I/O error would).
 */
export const FAULT_ENV = 'AV_DTA_FAULT';

interface JournalEntry {
  rel: string;
  tmp: string;
  /** The original's git blob id: a restore reads these bytes from git's objects, or from `copy` (checked against it). */
  blob: string;
  /** The original's permission bits, given back with its bytes. */
  mode: number;
  /** A copy of the original in the apply's folder, for one git's objects do not hold as it is in the tree. */
  copy?: string;
}

/** An entry of a journal written before git held the backups: a hard link (or copy) of every original, no mode. */
interface OldJournalEntry {
  rel: string;
  tmp: string;
  backup: string;
  blob?: string;
}

/** An old journal's entry as a new one: its backup is the copy (checked against the blob id, as then) and gives the mode. */
function fromOldEntry(e: JournalEntry | OldJournalEntry): JournalEntry {
  if (!('backup' in e) || 'mode' in e) return e as JournalEntry;
  let mode = 0o644;
  try {
    mode = fs.statSync(e.backup).mode & 0o7777;
  } catch {
    // no backup left: git's blob, with the usual mode
  }
  return { rel: e.rel, tmp: e.tmp, blob: e.blob ?? '', mode, copy: e.backup };
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

function fault(renamed: number): void {
  const spec = process.env[FAULT_ENV];
  if (!spec) return;
  const [kind, n] = spec.split(':');
  if (Number(n) !== renamed) return;
  if (kind === 'kill-after') process.kill(process.pid, 'SIGKILL');
  if (kind === 'stop-after') process.kill(process.pid, 'SIGSTOP');
  if (kind === 'throw-after') throw new Error(`injected failure after ${renamed} renames (${FAULT_ENV})`);
}

/** The flush of the new contents, or the injected fault in its place. */
function flushNewContents(j: Journal): Promise<void> {
  const spec = process.env[FAULT_ENV];
  const flushing = flushAllAsync(j.root, j.entries.map((e) => path.join(j.root, e.rel)));
  if (spec === 'kill-in-flush') process.kill(process.pid, 'SIGKILL');
  if (spec === 'fail-flush') return flushing.then(() => Promise.reject(new Error(`injected flush failure (${FAULT_ENV})`)));
  return flushing;
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

export interface ApplyOptions {
  /** The commit the run began on (its clean tree): the originals git holds are this commit's blobs. HEAD when not given. */
  head?: string;
  /**
   * HEAD's tree as the caller listed it (its proposal's): which originals git holds, without another
   * `git ls-tree` on the apply's path. Any blob a tree lists is in git's objects, so a restore can
   * read it back whichever commit it was listed from; a HEAD moved since fails the caller's `ready`.
   */
  tree?: TreeAt;
  /** The targets' blob ids and modes (checked by the caller), for the journal; else each target is read and stat'ed here. */
  originals?: ReadonlyMap<string, Original>;
  /**
   * The new contents its dry-run is writing ahead: written on until the apply is ready to rename,
   * then stopped; each renamed into place where still as written, the rest written here.
   */
  staged?: StagedContents | null;
  /**
   * What the caller checks beside the apply's own preparation (the tree unchanged since the run
   * began: `git status` in a process of its own, on the other core); nothing in the tree is written
   * or renamed before it resolves, and if it rejects the apply is undone with its reason.
   */
  ready?: Promise<unknown>;
}

/**
 * An apply whose files are all in place: its old files held open (atomic-apply-held.ts) until the
 * caller calls releaseOriginals() — once its verifier has read the tree — so that freeing their
 * blocks runs neither in the renames nor beside the verifier's reads (a caller that never calls it
 * frees them when the process ends); its new contents being flushed meanwhile.
 */
export interface AppliedFiles {
  /**
   * Settles once the new contents and their renames are on disk and the journal is gone: only then
   * is the apply complete (see the top of this file). Rejects — every file rolled back first, the
   * tree as before — when they cannot be flushed. Until it settles, a crash is rolled back by recover().
   */
  durable: Promise<void>;
  releaseOriginals(): Promise<void>;
}

/**
 * Resolves once every file is in place (or rejects, rolled back: the tree as before); complete
 * when its `durable` settles. `journalDir` is outside the tree (the worktree's git dir): it
 * survives a crash, never gets committed.
 */
export async function applyAtomic(root: string, journalDir: string, runId: string, changes: ReadonlyMap<string, string>, opts: ApplyOptions = {}): Promise<AppliedFiles> {
  const name = `${runId}${OWNER_MARK}${SELF_OWNER}`;
  const dir = path.join(journalDir, name);
  ownFolders.add(name);
  let placed: { journal: Journal; held: HeldOriginals };
  try {
    fs.mkdirSync(dir, { recursive: true });
    placed = await applyIn(root, dir, runId, changes, opts);
  } catch (err) {
    ownFolders.delete(name);
    throw err;
  }
  // In flight until durable: this process's own recover() leaves the folder alone meanwhile.
  const durable = makeDurable(placed.journal, dir, journalDir, placed.held).finally(() => ownFolders.delete(name));
  // Handled here too: a caller that fails before it waits for it leaves no unhandled rejection.
  durable.catch(() => undefined);
  return { durable, releaseOriginals: () => placed.held.release() };
}

/** The new contents on disk, then the journal removed (and that removal on disk): the apply is complete. */
async function makeDurable(j: Journal, dir: string, journalDir: string, held: HeldOriginals): Promise<void> {
  try {
    await flushNewContents(j);
  } catch (err) {
    void held.release();
    // Throws (the journal kept, for recover()) if an original cannot be put back either.
    rollback(j, j.entries.length);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  mark('apply: new contents on disk');
  fs.rmSync(dir, { recursive: true, force: true });
  try {
    fsyncDir(journalDir);
  } catch {
    // The removal stays in the page cache: a power loss before it is written makes recover() restore the originals.
  }
}

/** Each target's journal entry: its original's blob id and mode, and the temp beside it that a new content may be written to. */
function entriesOf(root: string, runId: string, changes: ReadonlyMap<string, string>, originals: ReadonlyMap<string, Original> | undefined): JournalEntry[] {
  return [...changes.keys()].map((rel) => {
    const target = path.join(root, rel);
    let original = originals?.get(rel);
    if (!original) {
      const st = fs.lstatSync(target);
      if (st.isSymbolicLink()) throw new Error(`${rel} is a symlink: an apply would replace the link with a file`);
      original = { blob: gitBlobId(fs.readFileSync(target)), mode: st.mode & 0o7777 };
    }
    return { rel, tmp: `${target}.dta-${runId}.tmp`, blob: original.blob, mode: original.mode };
  });
}

/**
 * Where each target's new content is renamed from: the dry-run's staged file where it has one
 * exactly as written, else its temp, written here. The staging went on while the apply prepared
 * (recover, the statuses, the journal); what it has not reached by now is written here from the
 * last target back, beside its thread, until the two meet; then it is stopped, and any target
 * still without a content gets its temp.
 */
async function newContents(staged: StagedContents | null | undefined, entries: JournalEntry[], writeTemp: (e: JournalEntry) => void): Promise<{ from: Map<string, string>; ahead: number }> {
  const from = new Map<string, string>();
  if (staged) {
    for (let i = entries.length - 1; i >= 0 && staged.leave(i); i--) {
      writeTemp(entries[i]!);
      from.set(entries[i]!.rel, entries[i]!.tmp);
    }
    staged.stop();
    await staged.done;
  }
  let ahead = 0;
  for (const e of entries) {
    if (from.has(e.rel)) continue;
    const file = staged ? stagedFile(staged, e.rel, e.mode) : null;
    if (file) ahead++;
    else writeTemp(e);
    from.set(e.rel, file ?? e.tmp);
  }
  return { from, ahead };
}

/**
 * Marks each entry git cannot give back as it is in the tree (see the top of this file) with the
 * path of the copy to keep; refuses a symlink (the caller's originals were read through it).
 */
function planCopies(dir: string, entries: JournalEntry[], tree: { blobs: ReadonlyMap<string, string>; modes: ReadonlyMap<string, string> }): JournalEntry[] {
  const copies: JournalEntry[] = [];
  entries.forEach((e, i) => {
    if (tree.modes.get(e.rel) === SYMLINK_MODE) throw new Error(`${e.rel} is a symlink: an apply would replace the link with a file`);
    if (tree.blobs.get(e.rel) === e.blob) return;
    e.copy = path.join(dir, COPIES_DIR, String(i));
    copies.push(e);
  });
  return copies;
}

/** The originals git does not hold, copied (and flushed) into the apply's folder: each checked against its blob id. */
function keepCopies(root: string, dir: string, copies: JournalEntry[]): void {
  if (copies.length === 0) return;
  fs.mkdirSync(path.join(dir, COPIES_DIR));
  for (const e of copies) {
    const bytes = fs.readFileSync(path.join(root, e.rel));
    if (gitBlobId(bytes) !== e.blob) throw new Error(`${e.rel} changed since the run read it`);
    writeDurable(e.copy!, bytes, 0o600);
  }
  fsyncDir(path.join(dir, COPIES_DIR));
}

/** applyAtomic() inside its folder `dir` up to the last rename (a failure removes the folder, the tree as before). */
async function applyIn(root: string, dir: string, runId: string, changes: ReadonlyMap<string, string>, opts: ApplyOptions): Promise<{ journal: Journal; held: HeldOriginals }> {
  // HEAD's blob ids and modes (the caller's, or one git process on the other core while the
  // entries are made): which originals git holds as they are in the tree.
  const tree = opts.tree ? Promise.resolve(opts.tree) : treeAt(root, opts.head ?? 'HEAD');
  // Both awaited below; settled meanwhile even when the apply fails first.
  tree.catch(() => undefined);
  opts.ready?.catch(() => undefined);
  let entries: JournalEntry[];
  let copies: JournalEntry[];
  let held: HeldOriginals | null = null;
  try {
    entries = entriesOf(root, runId, changes, opts.originals);
    // Opened while git lists HEAD's tree and the caller checks the status.
    held = holdOriginals(entries.map((e) => path.join(root, e.rel)));
    copies = planCopies(dir, entries, await tree);
  } catch (err) {
    // Nothing written yet but the folder.
    void held?.release();
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const journal: Journal = { run_id: runId, root, entries };
  // The journal comes first, on disk with its name, so a crash at any later point knows every temp
  // to remove and every original to restore.
  writeDurable(path.join(dir, `${JOURNAL_FILE}.tmp`), JSON.stringify(journal));
  fs.renameSync(path.join(dir, `${JOURNAL_FILE}.tmp`), path.join(dir, JOURNAL_FILE));
  fsyncDir(dir);
  mark(`apply: journal written (${copies.length} originals copied, the rest in git)`);
  let renamed = 0;
  // Read once per apply (it is the process's, and only this call's files are made under it).
  const umask = process.umask();
  try {
    keepCopies(root, dir, copies);
    if (opts.ready) await opts.ready;
    mark('apply: ready');
    const { from, ahead } = await newContents(opts.staged, entries, (e) => {
      fs.writeFileSync(e.tmp, changes.get(e.rel)!, { mode: e.mode });
      // The create mode passes through the umask: a chmod only where it took bits away.
      if (e.mode & umask) fs.chmodSync(e.tmp, e.mode);
    });
    mark(`apply: temps written (${ahead} staged ahead)`);
    // Not flushed first: the new contents need be on disk only before the apply is complete (makeDurable).
    for (const e of entries) {
      fs.renameSync(from.get(e.rel)!, path.join(root, e.rel));
      renamed++;
      fault(renamed);
    }
  } catch (err) {
    void held.release();
    rollback(journal, renamed);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { journal, held };
}

/**
 * The originals' bytes for `entries`: a copy where one was kept and still is the original, else
 * git's blob (all through one `git cat-file --batch`); undefined where neither has it.
 */
function originalsOf(j: Journal, entries: JournalEntry[]): Array<Buffer | undefined> {
  const out: Array<Buffer | undefined> = entries.map((e) => {
    if (!e.copy) return undefined;
    try {
      const bytes = fs.readFileSync(e.copy);
      return gitBlobId(bytes) === e.blob ? bytes : undefined;
    } catch {
      return undefined;
    }
  });
  const fromGit = entries.flatMap((e, i) => (out[i] ? [] : [i]));
  if (fromGit.length === 0) return out;
  let blobs: Array<Buffer | undefined> = [];
  try {
    blobs = catBlobBytesSync(j.root, fromGit.map((i) => entries[i]!.blob));
  } catch {
    // git cannot answer: those originals are lost, said below
  }
  fromGit.forEach((i, k) => (out[i] = blobs[k]));
  return out;
}

/**
 * Puts the originals back. `renamed`: how many entries (in order) had their new content renamed
 * into place, when this process knows (a failure in applyIn); the others' targets were never
 * touched and are left as they are — restoring them would undo whatever changed them meanwhile.
 * A crash's recover() cannot know: it restores every entry whose target does not hold its
 * original already (bytes and mode), so an untouched file keeps its inode.
 */
function rollback(j: Journal, renamed?: number): void {
  for (const e of j.entries) fs.rmSync(e.tmp, { force: true });
  const toRestore =
    renamed !== undefined
      ? j.entries.slice(0, renamed)
      : j.entries.filter((e) => {
          const now = regularFile(path.join(j.root, e.rel));
          return !now || now.mode !== e.mode || gitBlobId(now.bytes) !== e.blob;
        });
  if (toRestore.length === 0) return;
  const originals = originalsOf(j, toRestore);
  const lost: string[] = [];
  const restored: string[] = [];
  toRestore.forEach((e, i) => {
    const original = originals[i];
    if (!original) return lost.push(e.rel);
    // Write then rename: a crash during the rollback leaves the journal for the next recover().
    const target = path.join(j.root, e.rel);
    const restoring = `${target}.dta-restore.tmp`;
    fs.writeFileSync(restoring, original, { mode: e.mode });
    fs.chmodSync(restoring, e.mode); // the umask must not narrow the original mode
    fs.renameSync(restoring, target);
    restored.push(target);
  });
  // On disk before the journal that could restore them again goes.
  if (restored.length > 0) flushAll(j.root, restored);
  if (lost.length) throw new Error(`cannot restore ${lost.length} files: git has no blob of the original and no copy of it is left (${lost.slice(0, 5).join(', ')}); the journal is kept`);
}

/**
 * Rolls back every apply a crash left half-done; returns the run ids it restored. Only folders
 * whose owner is gone: another run's apply in flight in this worktree (another process, or this
 * one) is left to finish.
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
      rollback({ ...j, entries: j.entries.map(fromOldEntry) });
      restored.push(j.run_id);
    }
    // Without a journal the renames never started, or all ended: only copies or temps to remove
    // (or, from before git held the backups, a finished apply's hard links).
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return restored;
}
