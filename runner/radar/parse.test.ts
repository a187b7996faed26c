import { describe, expect, it } from 'vitest';
import { hunksOverlap, parseConflictMarkers, parseMergeTree, parseUnifiedDiff } from './parse';

describe('radar parsers', () => {
  it('reads `git diff -U0` hunks per file, deletions under their old name', () => {
    const text = [
      'diff --git a/src/x.js b/src/x.js',
      'index 1..2 100644',
      '--- a/src/x.js',
      '+++ b/src/x.js',
      '@@ -3 +3 @@ function x() {',
      '-old',
      '+new',
      '@@ -10,0 +11,2 @@',
      '+a',
      '+b',
      'diff --git a/gone.txt b/gone.txt',
      'deleted file mode 100644',
      '--- a/gone.txt',
      '+++ /dev/null',
      '@@ -1,2 +0,0 @@',
      '-1',
      '-2',
    ].join('\n');
    const out = parseUnifiedDiff(text);
    expect(out.get('src/x.js')).toEqual([
      { old_start: 3, old_lines: 1, new_start: 3, new_lines: 1, lines: ['-old', '+new'], more: 0 },
      { old_start: 10, old_lines: 0, new_start: 11, new_lines: 2, lines: ['+a', '+b'], more: 0 },
    ]);
    expect(out.get('gone.txt')?.[0]).toMatchObject({ old_start: 1, old_lines: 2, new_lines: 0 });
  });

  it('calls hunks on the same or adjacent base lines overlapping, distant ones not', () => {
    const h = (old_start: number, old_lines: number) => ({ old_start, old_lines, new_start: 0, new_lines: 0, lines: [], more: 0 });
    expect(hunksOverlap([h(3, 1)], [h(3, 1)])).toBe(true);
    expect(hunksOverlap([h(3, 1)], [h(4, 2)])).toBe(true);
    // Two insertions after the same line (both append at the end of a file).
    expect(hunksOverlap([h(10, 0)], [h(10, 0)])).toBe(true);
    expect(hunksOverlap([h(3, 1)], [h(20, 1)])).toBe(false);
    // One unchanged line between two changes: git merges them cleanly, so the radar does not flag them.
    expect(hunksOverlap([h(1, 1)], [h(3, 1)])).toBe(false);
    // An insertion right after a changed line is adjacent: git refuses that merge.
    expect(hunksOverlap([h(2, 0)], [h(3, 1)])).toBe(true);
    expect(hunksOverlap([], [h(1, 1)])).toBe(false);
  });

  it('reads merge-tree -z --name-only: tree, conflicted paths and their kinds', () => {
    const out = 'bc423b\0f\0g\0\x001\0f\0Auto-merging\0Auto-merging f\n\x001\0f\0CONFLICT (contents)\0CONFLICT (content): Merge conflict in f\n\x001\0g\0CONFLICT (modify/delete)\0g deleted\n\0';
    const parsed = parseMergeTree(out);
    expect(parsed.tree).toBe('bc423b');
    expect([...parsed.conflicts]).toEqual([['f', 'contents'], ['g', 'modify/delete']]);
    expect(parseMergeTree('abc123\n').conflicts.size).toBe(0);
  });

  it('finds conflict regions with both sides, skipping the diff3 base', () => {
    const text = ['a', '<<<<<<< one', 'B1', '||||||| base', 'b', '=======', 'B2', '>>>>>>> two', 'c'].join('\n');
    expect(parseConflictMarkers(text)).toEqual([{ line: 2, a: ['B1'], b: ['B2'] }]);
    expect(parseConflictMarkers('no markers\n')).toEqual([]);
  });
});
