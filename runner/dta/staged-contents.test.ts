import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { applyAtomic } from './atomic-apply';
import { sha256 } from './git-state';
import { discardStaged, stageContents } from './staged-contents';
import { gitIn, makeRepo } from './testing/fixture-repos';

// A loaded 2-core machine: a thread's start and a few hundred files can take seconds.
vi.setConfig({ testTimeout: 60_000 });

const repos: string[] = [];
afterAll(() => repos.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const N = 300;
const FILES = Object.fromEntries(Array.from({ length: N }, (_, i) => [`d${i % 7}/f${i}.txt`, `file ${i}\n`]));
const CHANGES = new Map(Object.keys(FILES).map((rel) => [rel, `changed ${rel}\n`]));

function setUp(): { dir: string; stateDir: string } {
  const dir = makeRepo(FILES);
  repos.push(dir);
  return { dir, stateDir: path.join(gitIn(dir, 'rev-parse', '--absolute-git-dir').trim(), 'agent-village-dta') };
}

/** Files anywhere in the tree (outside .git) that are not tracked: temps left behind. */
function untracked(dir: string): string {
  return gitIn(dir, 'status', '--porcelain', '--untracked-files=all').split('\n').filter((l) => l.startsWith('??')).join('\n');
}

describe('contents staged in a thread of their own', () => {
  it('stages every content with its hash and stat when left alone', async () => {
    const { dir, stateDir } = setUp();
    const staged = stageContents(dir, stateDir, 'run_all', CHANGES)!;
    await staged.done;
    expect(staged.files.size).toBe(N);
    for (const [rel, text] of CHANGES) {
      const e = staged.files.get(rel)!;
      expect(fs.readFileSync(e.file, 'utf8')).toBe(text);
      expect(e.sha256).toBe(sha256(text));
    }
    // Everything taken by the staging: an apply has nothing left to write itself.
    expect(staged.leave(N - 1)).toBe(false);
    discardStaged(staged);
    await vi.waitFor(() => expect(fs.existsSync(staged.dir)).toBe(false));
  });

  it('an apply that takes the staging while it writes meets it half-way: every target gets its content, nothing is left beside the targets', async () => {
    const { dir, stateDir } = setUp();
    const staged = stageContents(dir, stateDir, 'run_meet', CHANGES)!;
    // At once: the thread has written few or none, the apply writes from the last target back.
    const applied = await applyAtomic(dir, path.join(stateDir, 'journal'), 'run_meet', CHANGES, { staged });
    await applied.durable;
    await applied.releaseOriginals();
    for (const [rel, text] of CHANGES) expect(fs.readFileSync(path.join(dir, rel), 'utf8')).toBe(text);
    expect(untracked(dir)).toBe('');
    discardStaged(staged);
    await vi.waitFor(() => expect(fs.existsSync(staged.dir)).toBe(false));
  });

  it('a stopped staging writes nothing more: what it reported is all the apply may take', async () => {
    const { dir, stateDir } = setUp();
    const staged = stageContents(dir, stateDir, 'run_stop', CHANGES)!;
    staged.stop();
    await staged.done;
    const reported = staged.files.size;
    expect(fs.readdirSync(staged.dir)).toHaveLength(reported);
    discardStaged(staged);
    await vi.waitFor(() => expect(fs.existsSync(staged.dir)).toBe(false));
  });
});
