import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RADAR_PATCH_LIMITS, type RadarCompareResult, type Result } from '../../protocol';
import type { Logger } from '../log';
import { radarCompare } from './compare';
import { radarExport, radarHistory } from './export';

/** radar:compare on real git worktrees of one bare clone, as the runner lays them out. */
const log: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });

describe('radarCompare', () => {
  let dir: string;
  const wt: Record<string, string> = {};
  const A = 'sess_aaaaaaaa';
  const B = 'sess_bbbbbbbb';
  const C = 'sess_cccccccc';
  let bare: string;
  const deps = { log, worktreeOf: (id: string) => wt[id] ?? null, repoDir: (id: string) => (id === 'repo_1' ? bare : null) };
  const compare = (raw: unknown) => radarCompare(raw, deps) as Promise<Result<RadarCompareResult>>;
  const sess = (a: string, b: string, paths: string[], merge: boolean) => compare({ repo_id: 'repo_1', a: { kind: 'session', id: a }, b: { kind: 'session', id: b }, paths, merge });

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'av-radar-'));
    const src = path.join(dir, 'src');
    fs.mkdirSync(src);
    git(src, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(src, 'lamp.js'), 'one\ntwo\nthree\n');
    git(src, 'add', '.');
    git(src, 'commit', '-qm', 'base');
    bare = path.join(dir, 'repo.git');
    git(dir, 'clone', '-q', '--bare', src, bare);
    for (const id of [A, B, C]) {
      wt[id] = path.join(dir, id);
      git(bare, 'worktree', 'add', '-q', '-b', `agent/${id}`, wt[id], 'main');
    }
    // A commits its change; B leaves its change unstaged; C adds an untracked file elsewhere.
    fs.writeFileSync(path.join(wt[A], 'lamp.js'), 'one\nTWO from A\nthree\n');
    git(wt[A], 'commit', '-qam', 'A');
    fs.writeFileSync(path.join(wt[B], 'lamp.js'), 'one\nTWO from B\nthree\n');
    fs.mkdirSync(path.join(wt[C], 'docs'));
    fs.writeFileSync(path.join(wt[C], 'docs', 'note.md'), 'note\n');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('shows both sides’ hunks and names the conflicting region, leaving the worktrees as they were', async () => {
    const res = await sess(A, B, ['lamp.js'], true);
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.data.files).toEqual([
      {
        path: 'lamp.js',
        a: [{ old_start: 2, old_lines: 1, new_start: 2, new_lines: 1, lines: ['-two', '+TWO from A'], more: 0 }],
        b: [{ old_start: 2, old_lines: 1, new_start: 2, new_lines: 1, lines: ['-two', '+TWO from B'], more: 0 }],
        overlapping: true,
      },
    ]);
    expect(res.data.merge?.clean).toBe(false);
    expect(res.data.merge?.conflicts).toEqual([{ path: 'lamp.js', kind: 'contents', regions: [{ line: 2, a: ['TWO from A'], b: ['TWO from B'] }] }]);
    // B's change is still unstaged, C's file still untracked, no branch moved.
    expect(git(wt[B], 'status', '--porcelain')).toBe(' M lamp.js\n');
    expect(git(wt[C], 'status', '--porcelain')).toBe('?? docs/\n');
    expect(git(wt[B], 'rev-parse', 'HEAD')).toBe(git(wt[B], 'rev-parse', 'main'));
  });

  it('merges an untracked new file elsewhere cleanly', async () => {
    const res = await sess(A, C, [], true);
    expect(res.ok && res.data.merge).toMatchObject({ clean: true, conflicts: [] });
  });

  it('answers bad input and unknown sessions with clear errors', async () => {
    const bad = await sess(A, A, [], true);
    expect(bad.ok ? null : bad.error.code).toBe('BAD_REQUEST');
    const junk = await compare({ session_a: 'x', paths: 'no' });
    expect(junk.ok ? null : junk.error.code).toBe('BAD_REQUEST');
    const gone = await sess(A, 'sess_gonegone', [], false);
    expect(gone.ok ? null : gone.error).toEqual({ code: 'NOT_FOUND', message: 'no live worktree on this runner for sess_gonegone' });
  });

  /** A DTA-style unified patch (a/ b/ headers, no index line) of lamp.js's line two. */
  const dtaPatch = (to: string) => `--- a/lamp.js\n+++ b/lamp.js\n@@ -1,3 +1,3 @@\n one\n-two\n+${to}\n three\n`;
  const main = () => git(bare, 'rev-parse', 'main').trim();
  const dta = (patch: string, base = main()) => ({ kind: 'patch', id: 'dta_abcdefgh', origin: 'dta', base, patch });

  it('builds a DTA side from base + patch and names the conflict with a session, touching no worktree', async () => {
    const res = await compare({ repo_id: 'repo_1', a: { kind: 'session', id: B }, b: dta(dtaPatch('two by the DTA')), paths: ['lamp.js'], merge: true });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.data.files[0].b).toEqual([{ old_start: 2, old_lines: 1, new_start: 2, new_lines: 1, lines: ['-two', '+two by the DTA'], more: 0 }]);
    expect(res.data.merge?.conflicts).toEqual([{ path: 'lamp.js', kind: 'contents', regions: [{ line: 2, a: ['TWO from B'], b: ['two by the DTA'] }] }]);
    expect(git(wt[B], 'status', '--porcelain')).toBe(' M lamp.js\n');
    const clean = await compare({ repo_id: 'repo_1', a: { kind: 'session', id: C }, b: dta(dtaPatch('two by the DTA')), paths: [], merge: true });
    expect(clean.ok && clean.data.merge).toMatchObject({ clean: true, conflicts: [] });
  });

  it('says so when the DTA patch no longer applies or its base is not here', async () => {
    const stale = await compare({ repo_id: 'repo_1', a: { kind: 'session', id: B }, b: dta(dtaPatch('x').replace('-two', '-zwei')), paths: [], merge: true });
    expect(stale.ok ? null : stale.error.code).toBe('CONFLICT');
    expect(stale.ok ? '' : stale.error.message).toMatch(/^the DTA's patch no longer applies to its base/);
    const missing = await compare({ repo_id: 'repo_1', a: { kind: 'session', id: B }, b: dta(dtaPatch('x'), 'f'.repeat(40)), paths: [], merge: true });
    expect(missing.ok ? null : missing.error.message).toBe("the DTA's base commit ffffffffffff is not in this runner's clone of the repository");
    const noClone = await compare({ repo_id: 'repo_2', a: { kind: 'session', id: B }, b: dta(dtaPatch('x')), paths: [], merge: true });
    expect(noClone.ok ? null : noClone.error).toEqual({ code: 'NOT_FOUND', message: 'this runner has no clone of repository repo_2' });
  });

  it('exports a session as a binary patch against the merge base with another history, which rebuilds it elsewhere', async () => {
    const hist = await radarHistory({ repo_id: 'repo_1', session_id: A }, deps);
    expect(hist.ok && hist.data.commits.length).toBe(2); // A's commit and the base
    if (!hist.ok) return;
    const out = await radarExport({ repo_id: 'repo_1', session_id: B, origin: hist.data.origin, candidates: hist.data.commits }, deps);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.data.base).toBe(main());
    expect(out.data.patch).toContain('+TWO from B');
    const res = await compare({ repo_id: 'repo_1', a: { kind: 'session', id: A }, b: { kind: 'patch', id: B, origin: 'runner', base: out.data.base, patch: out.data.patch }, paths: ['lamp.js'], merge: true });
    expect(res.ok && res.data.merge?.conflicts[0]).toEqual({ path: 'lamp.js', kind: 'contents', regions: [{ line: 2, a: ['TWO from A'], b: ['TWO from B'] }] });
    const other = await radarExport({ repo_id: 'repo_1', session_id: B, origin: '/elsewhere/repo', candidates: hist.data.commits }, deps);
    expect(other.ok ? null : other.error.message).toMatch(/^the two runners do not hold the same repository/);
    const foreign = await radarExport({ repo_id: 'repo_1', session_id: B, origin: hist.data.origin, candidates: ['e'.repeat(40)] }, deps);
    expect(foreign.ok ? null : foreign.error.message).toMatch(/share none of the other session's last 1 commits/);
    const junk = await radarExport({ repo_id: 'repo_1', session_id: B, origin: 1, candidates: [] }, deps);
    expect(junk.ok ? null : junk.error.code).toBe('BAD_REQUEST');
  });

  it('refuses to export work bigger than a merge preview across runners carries', async () => {
    const hist = await radarHistory({ repo_id: 'repo_1', session_id: A }, deps);
    if (!hist.ok) throw new Error(hist.error.message);
    const blob = path.join(wt[C], 'big.bin');
    fs.writeFileSync(blob, crypto.randomBytes(RADAR_PATCH_LIMITS.MAX_REMOTE_PATCH_BYTES));
    try {
      const out = await radarExport({ repo_id: 'repo_1', session_id: C, origin: hist.data.origin, candidates: hist.data.commits }, deps);
      expect(out.ok ? null : out.error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(out.ok ? '' : out.error.message).toMatch(/^session sess_cccccccc's work is \d+\.\d MB as a patch, more than the 1\.5 MB/);
    } finally {
      fs.rmSync(blob);
    }
  });

  it('fetches the clone once when a DTA side starts from a commit it has not seen yet', async () => {
    const src = path.join(dir, 'src');
    fs.writeFileSync(path.join(src, 'lamp.js'), 'one\ntwo\nthree\nfour\n');
    git(src, 'commit', '-qam', 'newer on the source');
    const newer = git(src, 'rev-parse', 'HEAD').trim();
    const side = { kind: 'patch', id: 'dta_abcdefgh', origin: 'dta', base: newer, patch: dtaPatch('two by the DTA') };
    const raw = { repo_id: 'repo_1', a: { kind: 'session', id: C }, b: side, paths: [], merge: true };
    const without = await compare(raw);
    expect(without.ok ? null : without.error.code).toBe('CONFLICT');
    let fetched = 0;
    const refreshClone = async () => {
      fetched++;
      git(bare, 'fetch', '-q', 'origin', 'main');
    };
    const res = (await radarCompare(raw, { ...deps, refreshClone })) as Result<RadarCompareResult>;
    expect(fetched).toBe(1);
    expect(res.ok && res.data.merge).toMatchObject({ clean: true, conflicts: [] });
  });
});
