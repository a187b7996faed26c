import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { git } from '../workspace/git';

/**
 * What git says about the tree a DTA works on. A run starts only on a clean tree, so HEAD is the
 * "before" state: the verifier reads it from git's objects, never from what the adapter says.
 */

/** Where DTA artifacts go, relative to the top level; kept out of commits by info/exclude. */
export const RUNS_DIR = '.runs';
/** Never scanned: tooling and our own artifacts. */
const ALWAYS_IGNORED = ['**/node_modules/**', `${RUNS_DIR}/**`];

export async function topLevel(repoPath: string): Promise<string> {
  const out = await git(['rev-parse', '--show-toplevel'], { cwd: repoPath, what: 'rev-parse' });
  return fs.realpathSync(out.trim());
}

/** A directory with symlinks resolved, as topLevel() answers it, or as given when it is gone. */
export function realDir(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * A work tree's three folders from one `git rev-parse` (a process each was three processes per run):
 * its top level (symlinks resolved, as topLevel() answers), its own git directory (journals and
 * staged contents live there, outside the tree) and the common one all worktrees of the repository
 * share (the rate log, info/exclude).
 */
export interface RepoDirs {
  root: string;
  gitDir: string;
  commonDir: string;
}

export async function repoDirs(repoPath: string): Promise<RepoDirs> {
  const out = await git(['rev-parse', '--path-format=absolute', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], { cwd: repoPath, what: 'rev-parse' });
  const [root, gitDir, commonDir] = out.replace(/\n$/, '').split('\n');
  if (!root || !gitDir || !commonDir) throw new Error(`git rev-parse answered ${JSON.stringify(out.slice(0, 200))}`);
  return { root: fs.realpathSync(root), gitDir, commonDir };
}

export async function headSha(root: string): Promise<string> {
  return (await git(['rev-parse', 'HEAD'], { cwd: root, what: 'rev-parse' })).trim();
}

/** `git status` in a stable, complete form (untracked files included). */
export async function statusText(root: string): Promise<string> {
  return git(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd: root, what: 'status' });
}

/** HEAD + status, hashed: equal before discover and before apply, or the tree changed mid-run. */
export async function treeFingerprint(root: string): Promise<{ head: string; status: string; hash: string }> {
  const [head, status] = await Promise.all([headSha(root), statusText(root)]);
  return { head, status, hash: crypto.createHash('sha256').update(head).update('\0').update(status).digest('hex') };
}

/** The artifacts folder never shows up as untracked (and so never in a commit). `commonDir`: repoDirs().commonDir. */
export function excludeRunsDir(commonDir: string): void {
  const file = path.join(commonDir, 'info', 'exclude');
  const line = `/${RUNS_DIR}/`;
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }
  if (!text.split('\n').includes(line)) fs.appendFileSync(file, `${text && !text.endsWith('\n') ? '\n' : ''}${line}\n`);
}

/** Byte order, not locale order: the same tree gives the same order on every machine. */
export function byteCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function globMatcher(globs: string[]): (rel: string) => boolean {
  const yes = picomatch(globs, { dot: false });
  const no = picomatch(ALWAYS_IGNORED, { dot: true });
  return (rel) => yes(rel) && !no(rel);
}

/** The tree at a commit: every tracked path (byte order), each blob's id and each entry's mode by path. */
export interface TreeAt {
  paths: string[];
  blobs: Map<string, string>;
  /** git's mode of each entry ("100644", "100755", "120000" for a symlink, "160000" for a submodule). */
  modes: Map<string, string>;
}

/** git's mode of a symlink: its blob is the link's target, not a file's bytes. */
export const SYMLINK_MODE = '120000';

/**
 * The tree at `rev` from one `git ls-tree -r`: its paths (git's own list of tracked files: ignored
 * and untracked files are never touched), each blob's
 * id (what readBlobs asks git for) and each entry's mode. Entries that are not blobs (a
 * submodule's commit) are paths without an id, as `rev:path` could not read them either.
 */
export async function treeAt(root: string, rev: string): Promise<TreeAt> {
  const out = await git(['ls-tree', '-r', '-z', '--full-tree', rev], { cwd: root, what: 'ls-tree' });
  const paths: string[] = [];
  const blobs = new Map<string, string>();
  const modes = new Map<string, string>();
  for (const entry of out.split('\0')) {
    // "<mode> <type> <oid>\t<path>", the path unquoted under -z
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const rel = entry.slice(tab + 1);
    paths.push(rel);
    const [mode, type, oid] = entry.slice(0, tab).split(' ');
    if (mode) modes.set(rel, mode);
    if (type === 'blob' && oid) blobs.set(rel, oid);
  }
  return { paths: paths.sort(byteCompare), blobs, modes };
}

/**
 * Blob contents at `rev` for many paths (`tree`: treeAt(rev), when the caller has it). A path whose
 * file in the work tree is, byte for byte, the blob — its git blob id, computed here from the bytes
 * read, is the tree's — is taken from there: a read and a SHA-1 instead of git opening and
 * inflating a loose object (5,000 bench files: 50–85 ms against 330–480 ms through `git cat-file`
 * at load 13, and no git process on the other core). Only regular files are read (no FIFO or
 * device can stall it, a symlink is never followed); any other path — changed, missing, a link,
 * unreadable — comes from git's objects, so the answer is the commit's either way.
 */
export async function readBlobs(root: string, rev: string, files: string[], tree?: TreeAt): Promise<Map<string, string>> {
  const ids = (tree ?? (await treeAt(root, rev))).blobs;
  // In the order asked; undefined until read from git (and then, for a missing object, removed).
  const out = new Map<string, string | undefined>();
  const fromGit: string[] = [];
  for (const f of files) {
    const id = ids.get(f);
    if (id === undefined) continue;
    const bytes = regularFile(path.join(root, f))?.bytes ?? null;
    const same = bytes !== null && gitBlobId(bytes) === id;
    out.set(f, same ? bytes.toString('utf8') : undefined);
    if (!same) fromGit.push(f);
  }
  if (fromGit.length > 0) {
    const blobs = await catBlobs(root, fromGit.map((f) => ids.get(f)!));
    fromGit.forEach((f, i) => out.set(f, blobs[i]));
  }
  for (const [f, text] of out) if (text === undefined) out.delete(f);
  return out as Map<string, string>;
}

/** A regular file's bytes and mode; null for anything else (a symlink is not followed, a FIFO not waited on). */
export function regularFile(file: string): { bytes: Buffer; mode: number } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    return st.isFile() ? { bytes: fs.readFileSync(fd), mode: st.mode & 0o7777 } : null;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Objects by id through one `git cat-file --batch`: thousands without a process each. By object id
 * (from ls-tree), not `rev:path`: a path makes git resolve the commit and walk (inflate) its trees
 * again for every file — on a 5,000-file site 4x the git CPU, and seconds of wall time on a loaded
 * machine. Each answer in the order asked; undefined for a missing object.
 */
export function catBlobs(root: string, ids: string[]): Promise<Array<string | undefined>> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`git cat-file failed: ${stderr.trim()}`));
      resolve(parseCatFileBatch(Buffer.concat(chunks), ids.length).map((b) => b?.toString('utf8')));
    });
    child.stdin.end(batchInput(ids));
  });
}

/**
 * catBlobs() as bytes, synchronously: a rollback (atomic-apply.ts) restores originals from git's
 * objects exactly as stored (any bytes, not text), from code that cannot wait for the event loop.
 */
export function catBlobBytesSync(root: string, ids: string[]): Array<Buffer | undefined> {
  const out = execFileSync('git', ['cat-file', '--batch'], { cwd: root, input: batchInput(ids), maxBuffer: CAT_FILE_MAX_BUFFER, stdio: ['pipe', 'pipe', 'pipe'] });
  return parseCatFileBatch(out, ids.length);
}

/** What a rollback may read back from git at once (a 5,000-file site is ~10 MB; node caps one Buffer near this). */
const CAT_FILE_MAX_BUFFER = 1024 * 1024 * 1024;

function batchInput(ids: string[]): string {
  return ids.map((id) => `${id}\n`).join('');
}

/** `git cat-file --batch` answers: "<id> <type> <size>\n<bytes>\n" or "<id> missing\n", for `n` ids in order. */
function parseCatFileBatch(buf: Buffer, n: number): Array<Buffer | undefined> {
  const out: Array<Buffer | undefined> = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    const nl = buf.indexOf(0x0a, at);
    const header = buf.subarray(at, nl).toString();
    at = nl + 1;
    if (header.endsWith(' missing')) {
      out.push(undefined);
      continue;
    }
    const size = Number(header.split(' ')[2]);
    out.push(buf.subarray(at, at + size));
    at += size + 1;
  }
  return out;
}

/** git's id of a blob: sha1 over "blob <size>\0" and the bytes. */
export function gitBlobId(bytes: Buffer): string {
  return crypto.createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

export function sha256(text: string | Buffer): string {
  return crypto.createHash('sha256').update(text).digest('hex');
}
