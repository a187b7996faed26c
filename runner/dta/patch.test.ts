import { applyPatch, createTwoFilesPatch, parsePatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { linkUpdater } from './adapters/link-updater/adapter';
import { applyPatchInMemory, buildPatch, PATCH_CONTEXT_LINES } from './patch';
import { benchSite } from './testing/bench-site';
import { JSON_FILES, SITE_FILES, TS_FILES } from './testing/fixture-repos';

/** What buildPatch wrote before its line-for-line hunks: jsdiff's line diff for every file. */
function jsdiffPatch(before: ReadonlyMap<string, string>, changes: ReadonlyMap<string, string>): string {
  return [...changes.keys()]
    .sort()
    .map((rel) => createTwoFilesPatch(`a/${rel}`, `b/${rel}`, before.get(rel) ?? '', changes.get(rel)!, undefined, undefined, { context: PATCH_CONTEXT_LINES }))
    .join('');
}

const LINES = Array.from({ length: 30 }, (_, i) => `line ${i}\n`);
const edit = (lines: string[], at: number[], f = (l: string) => l.replace('line', 'LINE')) => lines.map((l, i) => (at.includes(i) ? f(l) : l)).join('');
/** Changes that keep the line count: first and last lines, gaps of exactly 2 × context and one more, runs, no final newline, CR LF, a lone CR. */
const SAME_COUNT: Record<string, [string, string]> = {
  'first.txt': [LINES.join(''), edit(LINES, [0])],
  'last.txt': [LINES.join(''), edit(LINES, [29])],
  'gap6.txt': [LINES.join(''), edit(LINES, [5, 12])],
  'gap7.txt': [LINES.join(''), edit(LINES, [5, 13])],
  'runs.txt': [LINES.join(''), edit(LINES, [3, 4, 5, 9, 10, 20])],
  'all.txt': [LINES.join(''), edit(LINES, LINES.map((_, i) => i))],
  'no-eol.txt': [LINES.join('').slice(0, -1), edit(LINES, [29]).slice(0, -1)],
  'no-eol-ctx.txt': [LINES.join('').slice(0, -1), edit(LINES, [27]).slice(0, -1)],
  'eol-added.txt': [LINES.join('').slice(0, -1), LINES.join('')],
  'eol-removed.txt': [LINES.join(''), LINES.join('').slice(0, -1)],
  'crlf.txt': [LINES.map((l) => l.replace('\n', '\r\n')).join(''), edit(LINES.map((l) => l.replace('\n', '\r\n')), [2, 17])],
  'cr.txt': [`a\rb\nc\n`, `a\rB\nc\n`],
  'one.txt': ['x', 'y'],
};

describe('buildPatch', () => {
  it("is jsdiff's own patch, byte for byte, on the bench site's link rewrites, the fixtures and the edge cases", async () => {
    const params = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };
    const site = new Map(Object.entries({ ...benchSite(300, 0), ...SITE_FILES }));
    const { changes } = await linkUpdater.propose(site, params, { allFiles: new Set(site.keys()), read: (rel) => site.get(rel), seed: 42 });
    expect(changes.size).toBeGreaterThan(300);
    expect(buildPatch(site, changes)).toBe(jsdiffPatch(site, changes));
    const before = new Map(Object.entries(SAME_COUNT).map(([rel, [a]]) => [rel, a]));
    const after = new Map(Object.entries(SAME_COUNT).map(([rel, [, b]]) => [rel, b]));
    for (const rel of before.keys()) expect(buildPatch(before, new Map([[rel, after.get(rel)!]])), rel).toBe(jsdiffPatch(before, new Map([[rel, after.get(rel)!]])));
  });

  it('applies (jsdiff and the verifier) to exactly the new texts, also where jsdiff would align the lines otherwise or the line count changes', () => {
    const cases: Record<string, [string, string]> = {
      ...SAME_COUNT,
      // Myers finds one deletion and one insertion here; line for line is three changed lines.
      'shifted.txt': ['A\nB\nC\n', 'B\nC\nD\n'],
      'grown.txt': [LINES.join(''), edit(LINES, [4], (l) => `${l}inserted\n`)],
      'json.json': [JSON_FILES['config/a.json']!, '{\n  "name": "a",\n  "port": 8080,\n  "enabled": true\n}\n'],
      'main.ts': [TS_FILES['src/main.ts']!, TS_FILES['src/main.ts']!.replaceAll('addNumbers', 'sumNumbers')],
    };
    const before = new Map(Object.entries(cases).map(([rel, [a]]) => [rel, a]));
    const after = new Map(Object.entries(cases).map(([rel, [, b]]) => [rel, b]));
    const patch = buildPatch(before, after);
    for (const p of parsePatch(patch)) {
      const rel = p.newFileName!.replace(/^b\//, '');
      expect(applyPatch(before.get(rel)!, p), rel).toBe(after.get(rel));
    }
    const applied = applyPatchInMemory(patch, (rel) => before.get(rel));
    expect(applied.ok && Object.fromEntries(applied.files)).toEqual(Object.fromEntries(after));
    expect(buildPatch(before, after)).toBe(patch);
  });
});
