import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyAtomic, backupsRemoved } from './atomic-apply';
import { makeRepo, snapshot } from './testing/fixture-repos';

const repos: string[] = [];
afterAll(() => repos.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const FILES = { 'a.txt': 'a\n', 'b.txt': 'b\n' };
const CHANGES = new Map([
  ['a.txt', 'A\n'],
  ['b.txt', 'B\n'],
]);

/** A promise the test settles: the caller's check that runs beside the apply's preparation. */
function gate(): { ready: Promise<void>; pass: () => void; fail: (why: Error) => void } {
  let pass = () => {};
  let fail: (why: Error) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    pass = resolve;
    fail = reject;
  });
  return { ready, pass, fail };
}

/**
 * The caller's tree check (engine.ts: `git status` again) runs while the apply writes its journal
 * and keeps the originals aside: nothing in the tree is written or renamed before it passes.
 */
describe('applyAtomic with a check beside it', () => {
  it('touches nothing in the tree before the check passes, then applies', async () => {
    const dir = makeRepo(FILES);
    repos.push(dir);
    const journal = path.join(dir, '.git', 'journal-test');
    const before = snapshot(dir);
    const g = gate();
    const applying = applyAtomic(dir, journal, 'run_ok', CHANGES, undefined, null, g.ready);
    // Journal and backups are made by now (outside the tree); the tree is as it was, no temps beside the targets.
    expect(fs.readdirSync(journal)).toHaveLength(1);
    expect(snapshot(dir)).toEqual(before);
    g.pass();
    const applied = await applying;
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('A\n');
    expect(fs.readFileSync(path.join(dir, 'b.txt'), 'utf8')).toBe('B\n');
    await applied.removeBackups();
    await backupsRemoved();
    expect(fs.readdirSync(journal)).toEqual([]);
  });

  it('a check that fails undoes the apply and leaves what changed meanwhile as it is (never "restored" over)', async () => {
    const dir = makeRepo(FILES);
    repos.push(dir);
    const journal = path.join(dir, '.git', 'journal-test');
    const g = gate();
    const applying = applyAtomic(dir, journal, 'run_changed', CHANGES, undefined, null, g.ready);
    // Someone edits a target while the check runs; the check sees the tree changed.
    fs.writeFileSync(path.join(dir, 'a.txt'), 'edited meanwhile\n');
    g.fail(new Error('the tree changed'));
    await expect(applying).rejects.toThrow('the tree changed');
    expect(snapshot(dir)).toEqual({ 'a.txt': Buffer.from('edited meanwhile\n').toString('base64'), 'b.txt': Buffer.from('b\n').toString('base64') });
    expect(fs.readdirSync(journal)).toEqual([]);
  });
});
