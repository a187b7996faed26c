import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RepoTreeSchema } from '../../protocol';
import { captureLogger, gitIn, makeSampleRepo, makeTempDir, removeTempDir } from '../testing/fixtures';
import { GitError } from './git';
import { MAX_SCAN_DIRS, WorkspaceManager, countDirs } from './workspace-manager';

describe('WorkspaceManager (real git)', () => {
  let tmp: string;
  let source: string;
  let ws: WorkspaceManager;
  const log = captureLogger();

  beforeEach(async () => {
    tmp = await makeTempDir('ws');
    source = makeSampleRepo(path.join(tmp, 'source'));
    ws = new WorkspaceManager(path.join(tmp, 'data'), log);
    await ws.init();
  });
  afterEach(() => removeTempDir(tmp));

  it('clones bare once, then fetches new commits before every worktree', async () => {
    const bare = await ws.ensureClone('repo_sample01', source);
    expect(bare).toBe(path.join(tmp, 'data', 'repos', 'repo_sample01.git'));
    expect(gitIn(bare, ['rev-parse', '--is-bare-repository']).trim()).toBe('true');

    fs.writeFileSync(path.join(source, 'NEW.md'), 'new\n');
    gitIn(source, ['add', 'NEW.md']);
    gitIn(source, ['commit', '-q', '-m', 'second']);
    gitIn(source, ['branch', 'feature']);
    const wt = await ws.prepareWorktree({
      session_id: 'sess_fetch0001',
      repo_id: 'repo_sample01',
      source,
      checkout: { type: 'branch', ref: 'feature' },
      mode: 'write',
    });
    expect(wt.sha).toBe(gitIn(source, ['rev-parse', 'HEAD']).trim());
    expect(fs.existsSync(path.join(wt.path, 'NEW.md'))).toBe(true);
  });

  it('write mode: worktree on branch agent/<session_id>, removed with the session, branch kept across fetches', async () => {
    const wt = await ws.prepareWorktree({
      session_id: 'sess_write0001',
      repo_id: 'repo_sample01',
      source,
      checkout: { type: 'branch', ref: 'main' },
      mode: 'write',
    });
    expect(wt.path).toBe(path.join(tmp, 'data', 'worktrees', 'sess_write0001'));
    expect(wt.branch).toBe('agent/sess_write0001');
    expect(gitIn(wt.path, ['symbolic-ref', '--short', 'HEAD']).trim()).toBe('agent/sess_write0001');
    expect(fs.readFileSync(path.join(wt.path, 'src/index.ts'), 'utf8')).toBe('export {};\n');
    fs.writeFileSync(path.join(wt.path, 'scratch.txt'), 'writable');

    // A second session's fetch (with --prune) must not delete the first session's branch.
    await ws.prepareWorktree({ session_id: 'sess_write0002', repo_id: 'repo_sample01', source, checkout: { type: 'branch', ref: 'main' }, mode: 'write' });
    const bare = ws.barePath('repo_sample01');
    expect(gitIn(bare, ['branch', '--list', 'agent/*'])).toContain('agent/sess_write0001');

    await ws.removeWorktree('sess_write0001');
    expect(fs.existsSync(wt.path)).toBe(false);
    expect(gitIn(bare, ['worktree', 'list'])).not.toContain('sess_write0001');
    await ws.removeWorktree('sess_write0002');
    expect(fs.readdirSync(ws.worktreesDir)).toEqual([]);
  });

  it('a merge into main in the clone survives the next fetch; main follows the source only by fast-forward', async () => {
    const wt = await ws.prepareWorktree({ session_id: 'sess_merge0001', repo_id: 'repo_sample01', source, checkout: { type: 'branch', ref: 'main' }, mode: 'write' });
    const bare = ws.barePath('repo_sample01');
    const commit = (dir: string, file: string, msg: string) => {
      fs.writeFileSync(path.join(dir, file), `${msg}\n`);
      gitIn(dir, ['add', file]);
      gitIn(dir, ['commit', '-q', '-m', msg]);
    };
    // The source moves on: the next fetch fast-forwards the clone's main.
    commit(source, 'UPSTREAM.md', 'upstream one');
    await ws.ensureClone('repo_sample01', source);
    expect(gitIn(bare, ['rev-parse', 'main']).trim()).toBe(gitIn(source, ['rev-parse', 'HEAD']).trim());
    // An approved merge lands in the clone's main (the agent's worktree switches to main and merges).
    commit(wt.path, 'AGENT.md', 'agent work');
    gitIn(wt.path, ['switch', '-q', 'main']);
    gitIn(wt.path, ['merge', '-q', '--no-ff', '-m', 'merge agent work', 'agent/sess_merge0001']);
    const merged = gitIn(bare, ['rev-parse', 'main']).trim();
    // The next fetch keeps it, even though the source has moved on meanwhile (diverged).
    commit(source, 'UPSTREAM2.md', 'upstream two');
    await ws.ensureClone('repo_sample01', source);
    expect(gitIn(bare, ['rev-parse', 'main']).trim()).toBe(merged);
    expect(gitIn(bare, ['rev-parse', 'origin/main']).trim()).toBe(gitIn(source, ['rev-parse', 'HEAD']).trim());
    // A new branch in the source appears locally; agent branches are untouched.
    gitIn(source, ['branch', 'release']);
    await ws.ensureClone('repo_sample01', source);
    expect(gitIn(bare, ['branch', '--list', 'release', 'agent/*'])).toMatch(/release[\s\S]*agent\/sess_merge0001|agent\/sess_merge0001[\s\S]*release/);
    await ws.removeWorktree('sess_merge0001');
  });

  it('read_only mode: detached and not writable, still removable', async () => {
    const wt = await ws.prepareWorktree({
      session_id: 'sess_ronly0001',
      repo_id: 'repo_sample01',
      source,
      checkout: { type: 'commit', ref: gitIn(source, ['rev-parse', 'HEAD']).trim() },
      mode: 'read_only',
    });
    expect(wt.branch).toBe('');
    expect(() => gitIn(wt.path, ['symbolic-ref', 'HEAD'])).toThrow();
    expect(fs.statSync(path.join(wt.path, 'README.md')).mode & 0o222).toBe(0);
    expect(fs.statSync(path.join(wt.path, 'src')).mode & 0o222).toBe(0);
    await ws.removeWorktree('sess_ronly0001');
    expect(fs.existsSync(wt.path)).toBe(false);
  });

  it('removes orphaned worktrees at start and prunes their git metadata', async () => {
    const wt = await ws.prepareWorktree({ session_id: 'sess_orphan001', repo_id: 'repo_sample01', source, checkout: { type: 'branch', ref: 'main' }, mode: 'read_only' });
    const fresh = new WorkspaceManager(path.join(tmp, 'data'), log);
    await fresh.init();
    expect(await fresh.cleanupOrphans()).toBe(1);
    expect(fs.existsSync(wt.path)).toBe(false);
    expect(gitIn(fresh.barePath('repo_sample01'), ['worktree', 'list'])).not.toContain('sess_orphan001');
  });

  it('scans every directory of HEAD with the count of files directly in it', async () => {
    const tree = await ws.scan('repo_sample01', source);
    expect(RepoTreeSchema.parse(tree)).toEqual(tree);
    expect(tree.default_branch).toBe('main');
    expect(tree.head_sha).toBe(gitIn(source, ['rev-parse', 'HEAD']).trim());
    expect(tree.truncated).toBe(false);
    expect(tree.dirs).toEqual([
      { path: '', files: 2 },
      { path: 'docs', files: 1 },
      { path: 'src', files: 2 },
      { path: 'src/lib', files: 0 },
      { path: 'src/lib/deep', files: 1 },
    ]);
  });

  it('answers a clear error for a bad source and leaves nothing behind', async () => {
    const missing = path.join(tmp, 'does-not-exist');
    const err = await ws.scan('repo_missing01', missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as Error).message).toMatch(/^git clone failed: .*does not exist/);
    expect(fs.readdirSync(ws.reposDir)).toEqual([]);
    await expect(ws.scan('repo_missing01', 'relative/path')).rejects.toThrow(/invalid repository source/);
    await expect(ws.scan('repo_missing01', '--upload-pack=evil')).rejects.toThrow(/invalid repository source/);
  });

  it('rejects an unknown branch with a readable message', async () => {
    await expect(
      ws.prepareWorktree({ session_id: 'sess_nobranch1', repo_id: 'repo_sample01', source, checkout: { type: 'branch', ref: 'nope' }, mode: 'write' }),
    ).rejects.toThrow('branch "nope" not found in the repository');
    expect(fs.readdirSync(ws.worktreesDir)).toEqual([]);
  });
});

describe('countDirs', () => {
  it('sorts by path, includes empty ancestors, treats submodules as directories', () => {
    const listing = [
      '100644 blob aaaa\tb/x.txt',
      '100644 blob aaaa\ta/deep/er/y.txt',
      '160000 commit bbbb\tvendor/sub',
      '100644 blob aaaa\ttop.txt',
    ].join('\0');
    expect(countDirs(listing)).toEqual({
      dirs: [
        { path: '', files: 1 },
        { path: 'a', files: 0 },
        { path: 'a/deep', files: 0 },
        { path: 'a/deep/er', files: 1 },
        { path: 'b', files: 1 },
        { path: 'vendor', files: 0 },
        { path: 'vendor/sub', files: 0 },
      ],
      truncated: false,
    });
  });

  it(`caps at ${MAX_SCAN_DIRS} directories and says so`, () => {
    const listing = Array.from({ length: MAX_SCAN_DIRS + 10 }, (_, i) => `100644 blob aaaa\td${i}/f`).join('\0');
    const { dirs, truncated } = countDirs(listing);
    expect(dirs).toHaveLength(MAX_SCAN_DIRS);
    expect(truncated).toBe(true);
    expect(dirs[0].path).toBe('');
  });
});
