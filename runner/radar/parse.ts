import { RADAR_LIMITS, type ConflictRegion, type RadarHunk } from '../../protocol';

/** Pure parsers of git's output for the radar; no I/O, so they are tested on literal text. */

const clip = (line: string) => (line.length > RADAR_LIMITS.MAX_LINE_CHARS ? `${line.slice(0, RADAR_LIMITS.MAX_LINE_CHARS)}…` : line);

/** `git diff -U0` of many files → hunks per path (b/ side's name; deletions keep the a/ name). */
export function parseUnifiedDiff(text: string): Map<string, RadarHunk[]> {
  const out = new Map<string, RadarHunk[]>();
  let current: RadarHunk[] | null = null;
  let hunk: RadarHunk | null = null;
  let minus: string | null = null;
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      current = null;
      hunk = null;
      minus = null;
      continue;
    }
    if (line.startsWith('--- ')) {
      minus = line === '--- /dev/null' ? null : line.replace(/^--- (a\/)?/, '');
      continue;
    }
    if (line.startsWith('+++ ')) {
      const name = line === '+++ /dev/null' ? minus : line.replace(/^\+\+\+ (b\/)?/, '');
      if (name === null) continue;
      current = out.get(name) ?? [];
      out.set(name, current);
      continue;
    }
    const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (m && current) {
      hunk = { old_start: Number(m[1]), old_lines: m[2] === undefined ? 1 : Number(m[2]), new_start: Number(m[3]), new_lines: m[4] === undefined ? 1 : Number(m[4]), lines: [], more: 0 };
      if (current.length < RADAR_LIMITS.MAX_HUNKS_PER_FILE) current.push(hunk);
      continue;
    }
    if (hunk && (line.startsWith('+') || line.startsWith('-'))) {
      if (hunk.lines.length < RADAR_LIMITS.MAX_HUNK_LINES) hunk.lines.push(clip(line));
      else hunk.more++;
    }
  }
  return out;
}

/**
 * The base lines a hunk stands on: its removed lines, or for a pure insertion the empty gap after
 * old_start (start = end + 1).
 */
function baseSpan(h: RadarHunk): [number, number] {
  const start = h.old_lines === 0 ? h.old_start + 1 : h.old_start;
  const end = h.old_lines === 0 ? h.old_start : h.old_start + h.old_lines - 1;
  return [start, end];
}

/**
 * Whether two sides' hunks of one file touch the same or adjacent base lines: git also refuses
 * to merge changes to neighbouring lines, but one unchanged line between them merges cleanly.
 */
export function hunksOverlap(a: RadarHunk[], b: RadarHunk[]): boolean {
  for (const x of a) {
    const [xs, xe] = baseSpan(x);
    for (const y of b) {
      const [ys, ye] = baseSpan(y);
      if (xs <= ye + 1 && ys <= xe + 1) return true;
    }
  }
  return false;
}

export interface MergeTreeOutput {
  tree: string;
  /** Conflicted paths with git's conflict kind ("contents", "modify/delete", …). */
  conflicts: Map<string, string>;
}

/**
 * `git merge-tree --write-tree -z --name-only` (git ≥ 2.38): the tree, NUL; conflicted paths, each
 * NUL; an empty entry; then messages as `<n>\0<path>×n\0<type>\0<message>\0`.
 */
export function parseMergeTree(out: string): MergeTreeOutput {
  const parts = out.split('\0');
  const tree = (parts[0] ?? '').trim();
  const conflicts = new Map<string, string>();
  let i = 1;
  for (; i < parts.length && parts[i] !== ''; i++) conflicts.set(parts[i], 'content');
  i++;
  while (i < parts.length) {
    const n = Number(parts[i]);
    if (!Number.isInteger(n) || n < 0) break;
    const paths = parts.slice(i + 1, i + 1 + n);
    const type = parts[i + 1 + n] ?? '';
    i += n + 3;
    const kind = /^CONFLICT \((.+)\)$/.exec(type)?.[1];
    if (!kind) continue;
    for (const p of paths) if (conflicts.has(p)) conflicts.set(p, kind);
  }
  return { tree, conflicts };
}

/** The `<<<<<<<` / `=======` / `>>>>>>>` regions of a merged file (diff3's `|||||||` base part is skipped). */
export function parseConflictMarkers(text: string): ConflictRegion[] {
  const regions: ConflictRegion[] = [];
  let region: ConflictRegion | null = null;
  let side: 'a' | 'base' | 'b' = 'a';
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    if (line.startsWith('<<<<<<< ') || line === '<<<<<<<') {
      region = { line: n + 1, a: [], b: [] };
      side = 'a';
    } else if (region && line.startsWith('|||||||')) {
      side = 'base';
    } else if (region && line === '=======') {
      side = 'b';
    } else if (region && (line.startsWith('>>>>>>> ') || line === '>>>>>>>')) {
      if (regions.length < RADAR_LIMITS.MAX_HUNKS_PER_FILE) regions.push(region);
      region = null;
    } else if (region && side !== 'base') {
      const list = region[side];
      if (list.length < RADAR_LIMITS.MAX_HUNK_LINES) list.push(clip(line));
    }
  }
  return regions;
}
