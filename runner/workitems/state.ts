import fs from 'node:fs';
import path from 'node:path';
import { blake3 } from '@noble/hashes/blake3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { blake3Hex } from '../../common/canonical';
import { git } from '../workspace/git';

/**
 * The state of a work tree as the contract hashes it: every file git would see (tracked and
 * untracked, minus ignored ones), by path in byte order, hashed with BLAKE3. Two trees with the
 * same bytes at the same paths have the same hash whatever their commits say.
 */

/** Who checkpoint and step commits are by (the runner's git may have no identity configured). */
export const COMMITTER = ['-c', 'user.name=Agent Village quest', '-c', 'user.email=quest@agent-village.invalid'];

export async function visibleFiles(root: string): Promise<string[]> {
  const out = await git(['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--deduplicate'], { cwd: root, what: 'ls-files' });
  // A tracked file deleted from disk is listed by --cached but has no bytes: it is not in the state.
  return [...new Set(out.split('\0').filter(Boolean))].filter((rel) => fs.existsSync(path.join(root, rel))).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export function fileHash(root: string, rel: string): string {
  return blake3Hex(fs.readFileSync(path.join(root, rel)));
}

/** BLAKE3 over "path NUL blake3(content) NUL" for every visible file. */
export async function stateHash(root: string): Promise<string> {
  const h = blake3.create();
  const enc = new TextEncoder();
  for (const rel of await visibleFiles(root)) h.update(enc.encode(`${rel}\0${fileHash(root, rel)}\0`));
  return bytesToHex(h.digest());
}

export async function head(root: string): Promise<string> {
  return (await git(['rev-parse', 'HEAD'], { cwd: root, what: 'rev-parse' })).trim();
}

/** The checkpoint: HEAD, after committing anything not yet committed (so a rollback can restore it). */
export async function checkpoint(root: string, message: string): Promise<string> {
  const status = await git(['status', '--porcelain', '--untracked-files=all'], { cwd: root, what: 'status' });
  if (status.trim()) {
    await git(['add', '-A'], { cwd: root, what: 'add' });
    await git([...COMMITTER, 'commit', '-q', '--no-verify', '-m', message], { cwd: root, what: 'commit' });
  }
  return head(root);
}

/** Back to the checkpoint: tracked files, the index and untracked files (ignored ones are not part of the state). */
export async function rollback(root: string, commit: string): Promise<void> {
  await git(['reset', '-q', '--hard', commit], { cwd: root, what: 'reset' });
  await git(['clean', '-q', '-f', '-d'], { cwd: root, what: 'clean' });
}

export interface Delta {
  modified: string[];
  created: string[];
  deleted: string[];
  /** Lines added + deleted (`git diff --numstat`; a binary file counts 1). */
  lines: number;
}

/** What changed since the checkpoint (stages everything: a rollback or the step commit follows). */
export async function deltaSince(root: string, commit: string): Promise<Delta> {
  await git(['add', '-A'], { cwd: root, what: 'add' });
  const names = (await git(['diff', '--cached', '--name-status', '--no-renames', '-z', commit], { cwd: root, what: 'diff' })).split('\0').filter(Boolean);
  const d: Delta = { modified: [], created: [], deleted: [], lines: 0 };
  for (let i = 0; i + 1 < names.length; i += 2) {
    const [status, rel] = [names[i]!, names[i + 1]!];
    (status.startsWith('A') ? d.created : status.startsWith('D') ? d.deleted : d.modified).push(rel);
  }
  for (const line of (await git(['diff', '--cached', '--numstat', '--no-renames', commit], { cwd: root, what: 'diff' })).split('\n')) {
    const [a, r] = line.split('\t');
    if (a === undefined || r === undefined) continue;
    d.lines += a === '-' ? 1 : Number(a) + Number(r);
  }
  return d;
}
