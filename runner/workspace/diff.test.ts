import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitIn, makeSampleRepo, makeTempDir, removeTempDir } from '../testing/fixtures';
import { computeDiff, countLines, parseNumstat, revertPath } from './diff';

describe('diff summary', () => {
  let tmp: string;
  let repo: string;
  let base: string;
  beforeEach(async () => {
    tmp = await makeTempDir('diff');
    repo = makeSampleRepo(path.join(tmp, 'repo'), { 'a.txt': '1\n2\n3\n', 'logo.png': '\x89PNG\0\0', 'src/b.ts': 'b\n', '.gitignore': 'ignored/\n' });
    base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
  });
  afterEach(async () => {
    await removeTempDir(tmp);
  });

  it('counts tracked, committed and untracked changes against the base; binaries get null', async () => {
    expect(await computeDiff(repo, base)).toEqual([]);
    fs.writeFileSync(path.join(repo, 'a.txt'), '1\nTWO\n3\n4\n');
    fs.writeFileSync(path.join(repo, 'logo.png'), '\x89PNG\0\x01');
    fs.rmSync(path.join(repo, 'src', 'b.ts'));
    fs.writeFileSync(path.join(repo, 'new file.md'), 'x\ny'); // no final newline: still two lines
    fs.writeFileSync(path.join(repo, 'blob.bin'), Buffer.from([0, 1, 2]));
    fs.mkdirSync(path.join(repo, 'ignored'));
    fs.writeFileSync(path.join(repo, 'ignored', 'x.log'), 'nope\n');
    fs.writeFileSync(path.join(repo, 'committed.ts'), 'c\n');
    gitIn(repo, ['add', 'committed.ts']);
    gitIn(repo, ['commit', '-qm', 'agent work']);
    expect(await computeDiff(repo, base)).toEqual([
      { path: 'a.txt', added: 2, removed: 1 },
      { path: 'blob.bin', added: null, removed: null },
      { path: 'committed.ts', added: 1, removed: 0 },
      { path: 'logo.png', added: null, removed: null },
      { path: 'new file.md', added: 2, removed: 0 },
      { path: 'src/b.ts', added: 0, removed: 1 },
    ]);
  });

  it('parses numstat records and counts lines', async () => {
    expect(parseNumstat('3\t1\ta b.txt\0-\t-\timg.png\0')).toEqual([
      { path: 'a b.txt', added: 3, removed: 1 },
      { path: 'img.png', added: null, removed: null },
    ]);
    const f = path.join(tmp, 'empty');
    fs.writeFileSync(f, '');
    expect(await countLines(f)).toBe(0);
    expect(await countLines(path.join(tmp, 'missing'))).toBeNull();
  });

  it('revertPath restores changed and deleted files, removes new ones, and is a no-op when nothing differs', async () => {
    fs.writeFileSync(path.join(repo, 'a.txt'), 'changed\n');
    fs.rmSync(path.join(repo, 'src', 'b.ts'));
    fs.writeFileSync(path.join(repo, 'src', 'new.ts'), 'n\n');
    expect(await revertPath(repo, base, 'a.txt')).toBe(true);
    expect(await revertPath(repo, base, 'src/b.ts')).toBe(true);
    expect(await revertPath(repo, base, 'src/new.ts')).toBe(true);
    expect(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('1\n2\n3\n');
    expect(fs.readFileSync(path.join(repo, 'src', 'b.ts'), 'utf8')).toBe('b\n');
    expect(fs.existsSync(path.join(repo, 'src', 'new.ts'))).toBe(false);
    expect(await revertPath(repo, base, 'a.txt')).toBe(false);
    expect(await revertPath(repo, base, 'src/new.ts')).toBe(false);
    expect(await revertPath(repo, base, '../outside')).toBe(false);
  });
});
