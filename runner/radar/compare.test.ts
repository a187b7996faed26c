import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RadarCompareResult, Result } from '../../protocol';
import type { Logger } from '../log';
import { radarCompare } from './compare';

/** radar:compare on real git worktrees of one bare clone, as the runner lays them out. */
const log: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });

describe('radarCompare', () => {
  let dir: string;
  const wt: Record<string, string> = {};
  const A = 'sess_aaaaaaaa';
  const B = 'sess_bbbbbbbb';
  const C = 'sess_cccccccc';
  const deps = { log, worktreeOf: (id: string) => wt[id] ?? null };
  const compare = (raw: unknown) => radarCompare(raw, deps) as Promise<Result<RadarCompareResult>>;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'av-radar-'));
    const src = path.join(dir, 'src');
    fs.mkdirSync(src);
    git(src, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(src, 'lamp.js'), 'one\ntwo\nthree\n');
    git(src, 'add', '.');
    git(src, 'commit', '-qm', 'base');
    const bare = path.join(dir, 'repo.git');
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
    const res = await compare({ session_a: A, session_b: B, paths: ['lamp.js'], merge: true });
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
    const res = await compare({ session_a: A, session_b: C, paths: [], merge: true });
    expect(res.ok && res.data.merge).toMatchObject({ clean: true, conflicts: [] });
  });

  it('answers bad input and unknown sessions with clear errors', async () => {
    const bad = await compare({ session_a: A, session_b: A, paths: [], merge: true });
    expect(bad.ok ? null : bad.error.code).toBe('BAD_REQUEST');
    const junk = await compare({ session_a: 'x', paths: 'no' });
    expect(junk.ok ? null : junk.error.code).toBe('BAD_REQUEST');
    const gone = await compare({ session_a: A, session_b: 'sess_gonegone', paths: [], merge: false });
    expect(gone.ok ? null : gone.error).toEqual({ code: 'NOT_FOUND', message: 'no live worktree on this runner for sess_gonegone' });
  });
});
