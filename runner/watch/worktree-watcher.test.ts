import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLogger, makeTempDir, removeTempDir, waitFor } from '../testing/fixtures';
import { WorktreeWatcher, isIgnoredPath, type WatchChange } from './worktree-watcher';

describe('WorktreeWatcher', () => {
  let dir: string;
  let watcher: WorktreeWatcher | null = null;
  beforeEach(async () => {
    dir = await makeTempDir('watch');
    fs.mkdirSync(path.join(dir, 'src', 'deep'), { recursive: true });
    fs.mkdirSync(path.join(dir, '.git'));
    fs.mkdirSync(path.join(dir, 'node_modules', 'pkg'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'src', 'deep', 'old.ts'), 'old\n');
  });
  afterEach(async () => {
    watcher?.close();
    watcher = null;
    await removeTempDir(dir);
  });

  it('reports changed files relative to the root, picks up new directories, skips .git and node_modules', async () => {
    const seen: WatchChange[] = [];
    watcher = new WorktreeWatcher(dir, (c) => seen.push(...c), captureLogger(), 20);
    watcher.start();
    // Root, src, src/deep: never .git, node_modules or anything under them.
    expect(watcher.watchedDirs).toBe(3);
    fs.writeFileSync(path.join(dir, 'top.md'), 'x');
    fs.appendFileSync(path.join(dir, 'src', 'deep', 'old.ts'), 'more\n');
    fs.writeFileSync(path.join(dir, '.git', 'index'), 'x');
    fs.writeFileSync(path.join(dir, 'node_modules', 'pkg', 'i.js'), 'x');
    fs.mkdirSync(path.join(dir, 'fresh', 'nested'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'fresh', 'nested', 'a.ts'), 'a');
    fs.rmSync(path.join(dir, 'src', 'deep', 'old.ts'));
    await waitFor(() => seen.some((c) => c.path === 'fresh/nested/a.ts') && seen.some((c) => c.path === 'src/deep/old.ts' && !c.exists), 'changes');
    const paths = new Set(seen.map((c) => c.path));
    expect(paths).toEqual(new Set(['top.md', 'src/deep/old.ts', 'fresh/nested/a.ts']));
    // A later write in the new directory is seen through its own watch.
    fs.writeFileSync(path.join(dir, 'fresh', 'nested', 'b.ts'), 'b');
    await waitFor(() => seen.some((c) => c.path === 'fresh/nested/b.ts'), 'write in the new directory');
  });

  it('ignores by path segment', () => {
    expect(isIgnoredPath('.git/index')).toBe(true);
    expect(isIgnoredPath('a/node_modules/b.js')).toBe(true);
    expect(isIgnoredPath('src/git.ts')).toBe(false);
    expect(isIgnoredPath('.github/workflows/ci.yml')).toBe(false);
  });

  it('stops at the directory limit instead of exhausting inotify', () => {
    for (let i = 0; i < 5; i++) fs.mkdirSync(path.join(dir, `d${i}`));
    const log = captureLogger();
    watcher = new WorktreeWatcher(dir, () => undefined, log, 20, 4);
    watcher.start();
    expect(watcher.watchedDirs).toBe(4);
    expect(log.lines.some((l) => l.includes('watching only 4 directories'))).toBe(true);
  });
});
