import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { applyAtomic, FAULT_ENV, recover } from './atomic-apply';
import { gitBlobId } from './git-state';
import { gitIn, makeRepo, snapshot } from './testing/fixture-repos';

// The crash test starts a process through tsx: on a loaded 2-core machine, seconds.
vi.setConfig({ testTimeout: 60_000 });

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
    const applying = applyAtomic(dir, journal, 'run_ok', CHANGES, { ready: g.ready });
    // Its journal is made (outside the tree) once git has said which originals it holds; the tree is as it was, no temps beside the targets.
    await expect.poll(() => fs.existsSync(path.join(journal, fs.readdirSync(journal)[0] ?? '-', 'journal.json'))).toBe(true);
    expect(fs.readdirSync(journal)).toHaveLength(1);
    expect(snapshot(dir)).toEqual(before);
    g.pass();
    const applied = await applying;
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('A\n');
    expect(fs.readFileSync(path.join(dir, 'b.txt'), 'utf8')).toBe('B\n');
    // In place, not yet complete: the journal stays until the new contents are on disk.
    expect(folders(journal)).toEqual([['journal.json']]);
    await applied.durable;
    // Complete: nothing left to remove afterwards (the originals' backup is git's objects).
    expect(fs.readdirSync(journal)).toEqual([]);
  });

  it('a check that fails undoes the apply and leaves what changed meanwhile as it is (never "restored" over)', async () => {
    const dir = makeRepo(FILES);
    repos.push(dir);
    const journal = path.join(dir, '.git', 'journal-test');
    const g = gate();
    const applying = applyAtomic(dir, journal, 'run_changed', CHANGES, { ready: g.ready });
    // Someone edits a target while the check runs; the check sees the tree changed.
    fs.writeFileSync(path.join(dir, 'a.txt'), 'edited meanwhile\n');
    g.fail(new Error('the tree changed'));
    await expect(applying).rejects.toThrow('the tree changed');
    expect(snapshot(dir)).toEqual({ 'a.txt': Buffer.from('edited meanwhile\n').toString('base64'), 'b.txt': Buffer.from('b\n').toString('base64') });
    expect(fs.readdirSync(journal)).toEqual([]);
  });
});

/** The apply's folders under `journal` and what each holds (its journal, copies of originals). */
function folders(journal: string): string[][] {
  return fs.existsSync(journal) ? fs.readdirSync(journal).map((f) => fs.readdirSync(path.join(journal, f)).sort()) : [];
}

/** This process's descriptors open on files of `dir` that are gone from it (renamed over). */
function heldGone(dir: string): string[] {
  return fs
    .readdirSync('/proc/self/fd')
    .flatMap((fd) => {
      try {
        return [fs.readlinkSync(`/proc/self/fd/${fd}`)];
      } catch {
        return [];
      }
    })
    .filter((l) => l.startsWith(`${dir}/`) && l.endsWith(' (deleted)'));
}

/** Runs applyAtomic in a process of its own with a fault injected; resolves with the signal it ended by. */
function applyInChild(dir: string, journal: string, runId: string, changes: Array<[string, string]>, fault: string): Promise<NodeJS.Signals | null> {
  const script = `const { applyAtomic } = await import(${JSON.stringify(path.join(import.meta.dirname, 'atomic-apply.ts'))}); const a = await applyAtomic(${JSON.stringify(dir)}, ${JSON.stringify(journal)}, ${JSON.stringify(runId)}, new Map(${JSON.stringify(changes)})); await a.durable;`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, [FAULT_ENV]: fault }, stdio: 'inherit' });
  return new Promise((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
}

describe('applyAtomic: the old files are freed after the caller is done', () => {
  it('holds each renamed-over original open until releaseOriginals(), so the renames do not free their blocks', async () => {
    const dir = makeRepo(FILES);
    repos.push(dir);
    const applied = await applyAtomic(dir, path.join(dir, '.git', 'journal-test'), 'run_held', CHANGES);
    expect(heldGone(dir).sort()).toEqual([`${dir}/a.txt (deleted)`, `${dir}/b.txt (deleted)`]);
    await applied.releaseOriginals();
    expect(heldGone(dir)).toEqual([]);
    await applied.durable;
  });
});

describe('applyAtomic: the originals come back from git, or from a copy where git holds other bytes', () => {
  it("a failure half-way restores each renamed file from git's blob, its mode kept, and kept no backup file meanwhile", async () => {
    const dir = makeRepo({ 'a.sh': '#!/bin/sh\necho a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    repos.push(dir);
    fs.chmodSync(path.join(dir, 'a.sh'), 0o755);
    gitIn(dir, 'commit', '-qam', 'executable');
    const journal = path.join(dir, '.git', 'journal-test');
    const before = snapshot(dir);
    const g = gate();
    process.env[FAULT_ENV] = 'throw-after:2';
    try {
      const applying = applyAtomic(dir, journal, 'run_git', new Map([['a.sh', '#!/bin/sh\necho A\n'], ['b.txt', 'B\n'], ['c.txt', 'C\n']]), { ready: g.ready });
      // Waiting for the caller's check, journal written: nothing beside it (git holds every original).
      await expect.poll(() => folders(journal)).toEqual([['journal.json']]);
      g.pass();
      await expect(applying).rejects.toThrow(/injected failure after 2 renames/);
    } finally {
      delete process.env[FAULT_ENV];
    }
    expect(snapshot(dir)).toEqual(before);
    expect(fs.statSync(path.join(dir, 'a.sh')).mode & 0o7777).toBe(0o755);
    expect(folders(journal)).toEqual([]);
    // The old files it held are let go with the rollback.
    await expect.poll(() => heldGone(dir)).toEqual([]);
    expect(gitIn(dir, 'status', '--porcelain')).toBe('');
  });

  it('a file whose bytes in the tree are not its blob (eol=crlf: git stores LF, the tree has CRLF) gets a copy, and comes back byte-identical', async () => {
    const dir = makeRepo({ '.gitattributes': '*.txt text eol=crlf\n', 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' });
    repos.push(dir);
    // Checked out again: the tree now holds what git's conversion makes of the blob.
    fs.rmSync(path.join(dir, 'a.txt'));
    gitIn(dir, 'checkout', '--', 'a.txt');
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('one\r\ntwo\r\n');
    expect(gitIn(dir, 'status', '--porcelain')).toBe('');
    const journal = path.join(dir, '.git', 'journal-test');
    const before = snapshot(dir);
    const g = gate();
    process.env[FAULT_ENV] = 'throw-after:2';
    try {
      const applying = applyAtomic(dir, journal, 'run_crlf', new Map([['a.txt', 'ONE\r\nTWO\r\n'], ['b.txt', 'B\n']]), { ready: g.ready });
      await expect.poll(() => folders(journal)).toEqual([['copy', 'journal.json']]);
      g.pass();
      await expect(applying).rejects.toThrow(/injected failure/);
    } finally {
      delete process.env[FAULT_ENV];
    }
    expect(snapshot(dir)).toEqual(before);
    expect(folders(journal)).toEqual([]);
  });

  it('a file HEAD does not hold (ignored by git) gets a copy, and comes back byte-identical', async () => {
    const dir = makeRepo({ '.gitignore': 'generated.txt\n', 'a.txt': 'a\n' });
    repos.push(dir);
    fs.writeFileSync(path.join(dir, 'generated.txt'), 'made by a build\n');
    const journal = path.join(dir, '.git', 'journal-test');
    process.env[FAULT_ENV] = 'throw-after:2';
    try {
      await expect(applyAtomic(dir, journal, 'run_ignored', new Map([['a.txt', 'A\n'], ['generated.txt', 'changed\n']]))).rejects.toThrow(/injected failure/);
    } finally {
      delete process.env[FAULT_ENV];
    }
    expect(fs.readFileSync(path.join(dir, 'generated.txt'), 'utf8')).toBe('made by a build\n');
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('a\n');
  });

  it('refuses a symlink (the link would become a file) before anything in the tree is touched', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'target.txt': 't\n' });
    repos.push(dir);
    fs.symlinkSync('target.txt', path.join(dir, 'link.txt'));
    gitIn(dir, 'add', 'link.txt');
    gitIn(dir, 'commit', '-qm', 'link');
    const before = snapshot(dir);
    const journal = path.join(dir, '.git', 'journal-test');
    // As the engine calls it, with the originals the dry-run read (through the link).
    const originals = new Map([
      ['a.txt', { blob: gitBlobId(Buffer.from('a\n')), mode: 0o644 }],
      ['link.txt', { blob: gitBlobId(Buffer.from('t\n')), mode: 0o644 }],
    ]);
    await expect(applyAtomic(dir, journal, 'run_link', new Map([['a.txt', 'A\n'], ['link.txt', 'T\n']]), { originals })).rejects.toThrow(/link\.txt is a symlink/);
    await expect(applyAtomic(dir, journal, 'run_link2', new Map([['link.txt', 'T\n']]))).rejects.toThrow(/link\.txt is a symlink/);
    expect(fs.lstatSync(path.join(dir, 'link.txt')).isSymbolicLink()).toBe(true);
    expect(snapshot(dir)).toEqual(before);
    expect(folders(journal)).toEqual([]);
  });

  it("a crash (SIGKILL) half-way: recover() restores every renamed file from git's objects, modes kept, and leaves untouched files' inodes as they are", async () => {
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, `file ${i}\n`]));
    const dir = makeRepo(files);
    repos.push(dir);
    fs.chmodSync(path.join(dir, 'f1.txt'), 0o755);
    gitIn(dir, 'commit', '-qam', 'executable');
    const before = snapshot(dir);
    const journal = path.join(dir, '.git', 'journal-test');
    const changes = Object.keys(files).map((rel): [string, string] => [rel, `changed ${rel}\n`]);
    expect(await applyInChild(dir, journal, 'run_crash', changes, 'kill-after:3')).toBe('SIGKILL');
    expect(folders(journal)).toEqual([['journal.json']]);
    expect(fs.readFileSync(path.join(dir, 'f0.txt'), 'utf8')).toBe('changed f0.txt\n');
    const untouched = fs.statSync(path.join(dir, 'f5.txt')).ino;
    expect(recover(journal)).toEqual(['run_crash']);
    expect(snapshot(dir)).toEqual(before);
    expect(fs.statSync(path.join(dir, 'f1.txt')).mode & 0o7777).toBe(0o755);
    expect(fs.statSync(path.join(dir, 'f5.txt')).ino).toBe(untouched);
    expect(folders(journal)).toEqual([]);
  });
});

describe('applyAtomic: the new contents are flushed after the renames, and the apply is complete only then', () => {
  it('a crash (SIGKILL) after every rename, while the flush runs: the journal is still there and recover() restores every file', async () => {
    const files = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`f${i}.txt`, `file ${i}\n`]));
    const dir = makeRepo(files);
    repos.push(dir);
    const before = snapshot(dir);
    const journal = path.join(dir, '.git', 'journal-test');
    const changes = Object.keys(files).map((rel): [string, string] => [rel, `changed ${rel}\n`]);
    expect(await applyInChild(dir, journal, 'run_flush_crash', changes, 'kill-in-flush')).toBe('SIGKILL');
    // Every file renamed into place, the journal kept: to recover(), an apply that never completed.
    for (const [rel, text] of changes) expect(fs.readFileSync(path.join(dir, rel), 'utf8')).toBe(text);
    expect(folders(journal)).toEqual([['journal.json']]);
    expect(recover(journal)).toEqual(['run_flush_crash']);
    expect(snapshot(dir)).toEqual(before);
    expect(folders(journal)).toEqual([]);
    expect(gitIn(dir, 'status', '--porcelain')).toBe('');
  });

  it('a flush that fails rolls every renamed file back: durable rejects, the tree is byte-identical, nothing is left in the journal folder', async () => {
    const dir = makeRepo(FILES);
    repos.push(dir);
    const journal = path.join(dir, '.git', 'journal-test');
    const before = snapshot(dir);
    process.env[FAULT_ENV] = 'fail-flush';
    try {
      const applied = await applyAtomic(dir, journal, 'run_flush_fails', CHANGES);
      // Renamed into place before the flush, as always now.
      expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('A\n');
      await expect(applied.durable).rejects.toThrow(/injected flush failure/);
    } finally {
      delete process.env[FAULT_ENV];
    }
    expect(snapshot(dir)).toEqual(before);
    expect(folders(journal)).toEqual([]);
    expect(gitIn(dir, 'status', '--porcelain')).toBe('');
  });
});

describe('recover(): journals written before git held the backups', () => {
  it('an older runner\'s crashed apply (a hard link per original, no modes in its journal) is rolled back from its links', () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'b.sh': 'b\n' });
    repos.push(dir);
    fs.chmodSync(path.join(dir, 'b.sh'), 0o755);
    gitIn(dir, 'commit', '-qam', 'executable');
    const before = snapshot(dir);
    const journal = path.join(dir, '.git', 'journal-test');
    // As that runner left it: originals linked aside, one renamed over, then killed (its pid is gone).
    const run = path.join(journal, 'run_old@999999999.1');
    fs.mkdirSync(path.join(run, 'backup'), { recursive: true });
    const entries = ['a.txt', 'b.sh'].map((rel, i) => ({ rel, backup: path.join(run, 'backup', String(i)), tmp: path.join(dir, `${rel}.dta-run_old.tmp`), blob: gitBlobId(fs.readFileSync(path.join(dir, rel))) }));
    for (const e of entries) fs.linkSync(path.join(dir, e.rel), e.backup);
    fs.writeFileSync(path.join(run, 'journal.json'), JSON.stringify({ run_id: 'run_old', root: dir, entries }));
    fs.writeFileSync(entries[1]!.tmp, 'B\n', { mode: 0o755 });
    fs.renameSync(entries[1]!.tmp, path.join(dir, 'b.sh'));
    fs.writeFileSync(entries[0]!.tmp, 'A\n');
    expect(recover(journal)).toEqual(['run_old']);
    expect(snapshot(dir)).toEqual(before);
    expect(fs.statSync(path.join(dir, 'b.sh')).mode & 0o7777).toBe(0o755);
    expect(fs.readdirSync(journal)).toEqual([]);
  });
});
