import { applyPatch, createTwoFilesPatch, parsePatch } from 'diff';
import { byteCompare } from './git-state';

/**
 * One unified patch for a proposal: files in byte order, fixed headers (`a/…`, `b/…`, no dates),
 * so the same inputs and tree give a byte-identical patch.
 */
export const PATCH_CONTEXT_LINES = 3;

export function buildPatch(before: ReadonlyMap<string, string>, changes: ReadonlyMap<string, string>): string {
  return [...changes.keys()]
    .sort(byteCompare)
    .map((rel) => createTwoFilesPatch(`a/${rel}`, `b/${rel}`, before.get(rel) ?? '', changes.get(rel)!, undefined, undefined, { context: PATCH_CONTEXT_LINES }))
    .join('');
}

/**
 * Applies a patch to contents in memory (the verifier's reading of a dry-run): the new contents
 * by path, or the first file it does not apply to.
 */
export function applyPatchInMemory(patch: string, read: (rel: string) => string | undefined): { ok: true; files: Map<string, string> } | { ok: false; reason: string } {
  const out = new Map<string, string>();
  for (const p of parsePatch(patch)) {
    const rel = (p.newFileName ?? '').replace(/^b\//, '');
    const base = read(rel);
    if (base === undefined) return { ok: false, reason: `${rel}: not in the tree` };
    const next = applyPatch(base, p);
    if (next === false) return { ok: false, reason: `${rel}: the patch does not apply` };
    out.set(rel, next);
  }
  return { ok: true, files: out };
}
