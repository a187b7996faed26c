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

/** One file's part of a patch (buildPatch's, the patch is these in byte order of path). */
export function filePatch(rel: string, before: string, after: string): string {
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

/** The line each file's part of a patch starts with (jsdiff's formatPatch); no hunk line starts with `=`. */
const FILE_HEADER = '===================================================================\n';

/** A patch cut into its files' parts (each from its header line to the next), as written. */
export function fileParts(patch: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (let at = patch.indexOf(`\n${FILE_HEADER}`); at >= 0; at = patch.indexOf(`\n${FILE_HEADER}`, at + 1)) {
    parts.push(patch.slice(from, at + 1));
    from = at + 1;
  }
  if (from < patch.length) parts.push(patch.slice(from));
  return parts;
}

/** A file's part of a patch known beforehand, by its exact text: the file and what the part makes of it. */
export interface KnownPart {
  rel: string;
  after: string;
}

/**
 * Applies a patch to contents in memory (the verifier's reading of a dry-run): the new contents
 * by path, or the first file it does not apply to (or that it changes twice). `known`: file parts
 * the caller wrote itself (filePatch of a base it read and a text it made), by their exact text —
 * such a part makes that text, without jsdiff parsing and applying it again; the other parts, in
 * their order, are jsdiff's to parse and apply as one patch, as before. A known part is a whole
 * file's part (its header, then hunks whose line counts are exact), so taking it out changes how
 * jsdiff reads no other part.
 */
export function applyPatchInMemory(patch: string, read: (rel: string) => string | undefined, known?: ReadonlyMap<string, KnownPart>): { ok: true; files: Map<string, string> } | { ok: false; reason: string } {
  const out = new Map<string, string>();
  const twice = (rel: string) => ({ ok: false as const, reason: `${rel}: changed twice by the patch` });
  let rest = patch;
  if (known && known.size > 0 && patch !== '') {
    const unknown: string[] = [];
    for (const part of fileParts(patch)) {
      const k = known.get(part);
      if (!k) unknown.push(part);
      else if (out.has(k.rel)) return twice(k.rel);
      else out.set(k.rel, k.after);
    }
    rest = unknown.join('');
    if (rest === '') return { ok: true, files: out };
  }
  for (const p of parsePatch(rest)) {
    const rel = (p.newFileName ?? '').replace(/^b\//, '');
    if (out.has(rel)) return twice(rel);
    const base = read(rel);
    if (base === undefined) return { ok: false, reason: `${rel}: not in the tree` };
    const next = applyPatch(base, p);
    if (next === false) return { ok: false, reason: `${rel}: the patch does not apply` };
    out.set(rel, next);
  }
  return { ok: true, files: out };
}
