import { applyPatch, createTwoFilesPatch, formatPatch, parsePatch, type StructuredPatchHunk } from 'diff';
import { byteCompare } from './git-state';

/**
 * One unified patch for a proposal: files in byte order, fixed headers (`a/…`, `b/…`, no dates),
 * so the same inputs and tree give a byte-identical patch.
 */
export const PATCH_CONTEXT_LINES = 3;

export function buildPatch(before: ReadonlyMap<string, string>, changes: ReadonlyMap<string, string>): string {
  return [...changes.keys()]
    .sort(byteCompare)
    .map((rel) => filePatch(rel, before.get(rel) ?? '', changes.get(rel)!))
    .join('');
}

function filePatch(rel: string, before: string, after: string): string {
  const hunks = lineForLineHunks(linesOf(before), linesOf(after), PATCH_CONTEXT_LINES);
  if (hunks) return formatPatch({ oldFileName: `a/${rel}`, newFileName: `b/${rel}`, oldHeader: undefined, newHeader: undefined, hunks });
  return createTwoFilesPatch(`a/${rel}`, `b/${rel}`, before, after, undefined, undefined, { context: PATCH_CONTEXT_LINES });
}

/** The text's lines, each with its `\n` (the last one without, when the text does not end in one), as jsdiff splits them. */
function linesOf(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl + 1;
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

/**
 * The hunks of a change that keeps the number of lines (every link rewrite, most renames), with
 * line i of the old text against line i of the new: no diff algorithm to run. jsdiff's line diff
 * (Myers) was a fifth of the runner's dry-run on a 5,000-file site, to find an alignment the
 * adapter already knows. Laid out as jsdiff lays out its hunks (each run of changed lines as its
 * removals then its additions, `context` lines around, hunks joined when at most 2 × `context`
 * lines apart, `\ No newline at end of file` after a last line without one), so where jsdiff
 * finds this same alignment the patch is byte for byte its patch (patch.test.ts). null when the
 * line counts differ: jsdiff diffs those.
 */
export function lineForLineHunks(a: readonly string[], b: readonly string[], context: number): StructuredPatchHunk[] | null {
  if (a.length !== b.length) return null;
  const hunks: StructuredPatchHunk[] = [];
  let i = 0;
  while (i < a.length) {
    if (a[i] === b[i]) {
      i++;
      continue;
    }
    // A hunk: from this changed line to the last one followed by more than 2 × context same lines.
    const from = Math.max(0, i - context);
    const lines: string[] = [];
    for (let k = from; k < i; k++) lines.push(` ${a[k]}`);
    let end = i;
    for (;;) {
      let runEnd = end;
      while (runEnd < a.length && a[runEnd] !== b[runEnd]) runEnd++;
      for (let k = end; k < runEnd; k++) lines.push(`-${a[k]}`);
      for (let k = end; k < runEnd; k++) lines.push(`+${b[k]}`);
      let next = runEnd;
      while (next < a.length && a[next] === b[next]) next++;
      if (next < a.length && next - runEnd <= 2 * context) {
        for (let k = runEnd; k < next; k++) lines.push(` ${a[k]}`);
        end = next;
        continue;
      }
      end = Math.min(a.length, runEnd + context);
      for (let k = runEnd; k < end; k++) lines.push(` ${a[k]}`);
      break;
    }
    hunks.push({ oldStart: from + 1, oldLines: end - from, newStart: from + 1, newLines: end - from, lines: withoutNewlines(lines) });
    i = end;
  }
  return hunks;
}

/** A hunk's lines as a patch has them: each `\n` dropped, and a line without one followed by the marker. */
function withoutNewlines(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (line.endsWith('\n')) out.push(line.slice(0, -1));
    else out.push(line, '\\ No newline at end of file');
  }
  return out;
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
