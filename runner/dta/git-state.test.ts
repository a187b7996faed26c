import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBlobs, repoDirs } from './git-state';
import { gitIn, makeRepo } from './testing/fixture-repos';

const repos: string[] = [];
afterAll(() => repos.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('repoDirs', () => {
  it("answers a linked worktree's top level (symlinks resolved), its own git dir and the repository's common one, from any folder in it", async () => {
    const dir = makeRepo({ 'd/a.txt': 'one\n' });
    repos.push(dir);
    const linked = `${dir}-linked`;
    repos.push(linked);
    gitIn(dir, 'worktree', 'add', '-q', '-b', 'other', linked);
    const alias = `${dir}-alias`;
    repos.push(alias);
    fs.symlinkSync(linked, alias);
    expect(await repoDirs(path.join(alias, 'd'))).toEqual({ root: fs.realpathSync(linked), gitDir: path.join(fs.realpathSync(dir), '.git', 'worktrees', path.basename(linked)), commonDir: path.join(fs.realpathSync(dir), '.git') });
    await expect(repoDirs(path.dirname(dir))).rejects.toThrow();
  });
});

describe('readBlobs', () => {
  it("reads each path's bytes at the given commit, not the file on disk, and leaves out paths it lacks", async () => {
    const dir = makeRepo({ 'a.txt': 'one\n', 'd/b.md': '# b\n', 'd/e/c.html': '<p>c</p>\n' });
    repos.push(dir);
    const first = gitIn(dir, 'rev-parse', 'HEAD').trim();
    fs.writeFileSync(path.join(dir, 'd/b.md'), '# b, second\n');
    gitIn(dir, 'commit', '-q', '-am', 'second');
    fs.writeFileSync(path.join(dir, 'd/b.md'), 'not committed\n');
    const head = await readBlobs(dir, 'HEAD', ['a.txt', 'd/b.md', 'd/e/c.html', 'gone.txt']);
    expect(Object.fromEntries(head)).toEqual({ 'a.txt': 'one\n', 'd/b.md': '# b, second\n', 'd/e/c.html': '<p>c</p>\n' });
    const old = await readBlobs(dir, first, ['d/b.md']);
    expect(old.get('d/b.md')).toBe('# b\n');
  });

  it("takes a work tree file that is byte for byte the blob, and git's blob for one that is not a regular file (a FIFO is not waited on, a symlink not followed)", async () => {
    const dir = makeRepo({ 'same.txt': 'same\n', 'fifo.txt': 'was a file\n', 'link.txt': 'was a file too\n', 'secret/x.txt': 'outside\n' });
    repos.push(dir);
    fs.rmSync(path.join(dir, 'fifo.txt'));
    execFileSync('mkfifo', [path.join(dir, 'fifo.txt')]);
    fs.rmSync(path.join(dir, 'link.txt'));
    fs.symlinkSync(path.join(dir, 'secret/x.txt'), path.join(dir, 'link.txt'));
    const head = await readBlobs(dir, 'HEAD', ['fifo.txt', 'link.txt', 'same.txt']);
    expect([...head]).toEqual([
      ['fifo.txt', 'was a file\n'],
      ['link.txt', 'was a file too\n'],
      ['same.txt', 'same\n'],
    ]);
  });
});
