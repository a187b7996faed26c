import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { DtaInvocationInput } from '../../protocol';
import { runDta, STATE_DIR } from './engine';
import { RACY_MS, readWithStat } from './file-stat';
import { gitBlobId } from './git-state';
import { dropKeptProposals, forgetProposals, keptProposalCount, stillFits, type KeptProposal } from './kept-proposals';
import { gitIn, makeRepo, SITE_FILES, snapshot } from './testing/fixture-repos';

// Each run talks to a verifier process (tsx); a loaded 2-core machine needs minutes, not seconds.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const repos: string[] = [];
afterAll(() => {
  dropKeptProposals();
  repos.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
});
function repo(): string {
  const d = makeRepo(SITE_FILES);
  repos.push(d);
  return d;
}
const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };
const inv = (dir: string, mode: 'dry-run' | 'apply', approved?: string): DtaInvocationInput => ({
  tool: 'link_updater',
  version: '1.0',
  mode,
  target: { repo_path: dir, glob: 'site/**' },
  params: LINKS,
  ...(approved ? { expected_patch_sha256: approved } : {}),
});
const CSS = 'site/css/site.css';
/** A rewrite the dry-run of SITE_FILES proposes for site.css (its first line). */
const PROPOSED_CSS_LINE = '@import "https://new.example.com/base.css";';

/**
 * The approved apply writes its dry-run's recorded proposal instead of proposing again — only while
 * the tree is the one it was proposed from. A file changed since the dry-run is never written with
 * the stale proposal: the apply proposes again, and the approval (bound to the old patch) no longer
 * matches, so nothing is applied.
 */
describe('apply from the dry-run proposal', () => {
  it('applies the approved proposal and its verifier re-measures the files (kept, then taken)', async () => {
    const dir = repo();
    const dry = await runDta(inv(dir, 'dry-run'));
    expect(dry).toMatchObject({ ok: true, verifier: { passed: true } });
    expect(keptProposalCount()).toBeGreaterThan(0);
    const kept = keptProposalCount();
    const applied = await runDta(inv(dir, 'apply', dry.patch_sha256!));
    expect(applied).toMatchObject({ ok: true, phase: 'verify', verifier: { passed: true }, files: dry.files, patch_sha256: dry.patch_sha256, baseline: dry.baseline });
    expect(applied.notes.join('\n')).not.toMatch(/proposed again/);
    expect(keptProposalCount()).toBe(kept - 1);
    expect(fs.readFileSync(path.join(dir, CSS), 'utf8').split('\n')[0]).toBe(PROPOSED_CSS_LINE);
    expect(applied.verifier.measured?.after).toMatchObject({ links_to_update: 0 });
  });

  it('a changed file committed after the dry-run: proposed again, the approval no longer matches, nothing is written', async () => {
    const dir = repo();
    const dry = await runDta(inv(dir, 'dry-run'));
    const edited = '@import "http://old.example.com/other.css";\n';
    fs.writeFileSync(path.join(dir, CSS), edited);
    gitIn(dir, 'commit', '-q', '-am', 'someone changed the css');
    const applied = await runDta(inv(dir, 'apply', dry.patch_sha256!));
    expect(applied.ok).toBe(false);
    expect(applied.error).toMatchObject({ code: 'PATCH_MISMATCH' });
    expect(applied.notes.join('\n')).toMatch(/proposed again: HEAD or the status changed since the dry-run/);
    expect(fs.readFileSync(path.join(dir, CSS), 'utf8')).toBe(edited);
    expect(gitIn(dir, 'status', '--porcelain', '--untracked-files=no')).toBe('');
  });

  it('a changed file git status does not show (assume-unchanged): its hash differs, so the stale edit is never written', async () => {
    const dir = repo();
    const dry = await runDta(inv(dir, 'dry-run'));
    // HEAD and status stay as they were: only the file's own bytes tell.
    gitIn(dir, 'update-index', '--assume-unchanged', CSS);
    const edited = `/* edited after the dry-run */\n${SITE_FILES[CSS]}`;
    fs.writeFileSync(path.join(dir, CSS), edited);
    expect(gitIn(dir, 'status', '--porcelain')).toBe('');
    const applied = await runDta(inv(dir, 'apply', dry.patch_sha256!));
    expect(applied.notes.join('\n')).toMatch(/proposed again: site\/css\/site\.css changed since the dry-run/);
    expect(applied.error).toMatchObject({ code: 'PATCH_MISMATCH' });
    expect(fs.readFileSync(path.join(dir, CSS), 'utf8')).toBe(edited);
    expect(fs.readFileSync(path.join(dir, 'site/index.html'), 'utf8')).toBe(SITE_FILES['site/index.html']);
  });

  it('HEAD moved by a change outside the proposal: proposed again, the same patch, applied and verified', async () => {
    const dir = repo();
    const dry = await runDta(inv(dir, 'dry-run'));
    fs.writeFileSync(path.join(dir, 'NOTES.txt'), 'unrelated\n');
    gitIn(dir, 'add', 'NOTES.txt');
    gitIn(dir, 'commit', '-q', '-m', 'unrelated');
    const applied = await runDta(inv(dir, 'apply', dry.patch_sha256!));
    expect(applied.notes.join('\n')).toMatch(/proposed again: HEAD or the status changed/);
    expect(applied).toMatchObject({ ok: true, phase: 'verify', verifier: { passed: true }, patch_sha256: dry.patch_sha256 });
  });

  it('an apply refused on a dirty tree leaves the proposal kept: the next apply on the clean tree takes it', async () => {
    const dir = repo();
    const dry = await runDta(inv(dir, 'dry-run'));
    const kept = keptProposalCount();
    fs.writeFileSync(path.join(dir, 'scratch.txt'), 'uncommitted\n');
    const before = snapshot(dir);
    // Its apply was prepared beside the status read (apply-ahead.ts): undone, the tree untouched, no journal left.
    const refused = await runDta(inv(dir, 'apply', dry.patch_sha256!));
    expect(refused.error).toMatchObject({ code: 'DIRTY_TREE' });
    expect(snapshot(dir)).toEqual(before);
    expect(fs.readdirSync(path.join(dir, '.git', STATE_DIR, 'journal'))).toEqual([]);
    expect(keptProposalCount()).toBe(kept);
    fs.rmSync(path.join(dir, 'scratch.txt'));
    const applied = await runDta(inv(dir, 'apply', dry.patch_sha256!));
    expect(applied).toMatchObject({ ok: true, phase: 'verify', verifier: { passed: true } });
    expect(applied.notes.join('\n')).not.toMatch(/proposed again/);
    expect(keptProposalCount()).toBe(kept - 1);
  });

  it('another invocation (other params) never takes the proposal: the approval of another patch is refused', async () => {
    const dir = repo();
    const dry = await runDta(inv(dir, 'dry-run'));
    const other = { ...inv(dir, 'apply', dry.patch_sha256!), params: { ...LINKS, to_host: 'https://elsewhere.example.com' } };
    const applied = await runDta(other);
    expect(applied.error).toMatchObject({ code: 'PATCH_MISMATCH' });
    expect(fs.readFileSync(path.join(dir, CSS), 'utf8')).toBe(SITE_FILES[CSS]);
  });
});

/**
 * A dry-run asked to stage (the gate's, in the runner) writes its new contents ahead; the approved
 * apply renames them into place — only files exactly as written — and removes what is left.
 */
describe('contents staged by the dry-run', () => {
  const stagedRoot = (dir: string) => path.join(gitIn(dir, 'rev-parse', '--absolute-git-dir').trim(), 'agent-village-dta', 'staged');
  const stagedFiles = (dir: string) => {
    const root = stagedRoot(dir);
    return fs.existsSync(root) ? fs.readdirSync(root).flatMap((run) => fs.readdirSync(path.join(root, run)).map((f) => path.join(root, run, f))) : [];
  };

  it('the apply takes what is staged, never a staged file changed since (its target comes from the proposal), and ends with nothing staged', async () => {
    const dir = repo();
    const plain = repo();
    const dry = await runDta(inv(dir, 'dry-run'), { stageForApply: true });
    expect(dry).toMatchObject({ ok: true, verifier: { passed: true } });
    // One file a changed path, numbered in the proposal's order of files, written in the background.
    await vi.waitFor(() => expect(stagedFiles(dir)).toHaveLength(dry.files.length), { timeout: 60_000 });
    const staged = stagedFiles(dir).sort((a, b) => Number(path.basename(a)) - Number(path.basename(b)));
    const secondInode = fs.statSync(staged[1]!).ino;
    // Someone writes into one staged file (the git dir is writable to more than the runner).
    fs.writeFileSync(staged[0]!, 'forged\n');
    const applied = await runDta(inv(dir, 'apply', dry.patch_sha256!));
    expect(applied).toMatchObject({ ok: true, phase: 'verify', verifier: { passed: true } });
    expect(stagedFiles(dir)).toEqual([]);
    // The untouched staged file is the applied file itself (renamed into place, not written again).
    expect(fs.statSync(path.join(dir, dry.files[1]!)).ino).toBe(secondInode);
    // The same tree as an apply that staged nothing.
    const plainDry = await runDta(inv(plain, 'dry-run'));
    expect(plainDry.patch_sha256).toBe(dry.patch_sha256);
    await runDta(inv(plain, 'apply', plainDry.patch_sha256!));
    expect(snapshot(dir)).toEqual(snapshot(plain));
    expect(Object.values(snapshot(dir)).map((b) => Buffer.from(b, 'base64').toString()).join('')).not.toContain('forged');
  });

  it('a dry-run not asked to stage writes nothing ahead; a proposal dropped (its worktree forgotten) takes its staged files with it', async () => {
    const dir = repo();
    await runDta(inv(dir, 'dry-run'));
    expect(stagedFiles(dir)).toEqual([]);
    const dry = await runDta(inv(dir, 'dry-run'), { stageForApply: true });
    await vi.waitFor(() => expect(stagedFiles(dir)).toHaveLength(dry.files.length), { timeout: 60_000 });
    forgetProposals(dir);
    await vi.waitFor(() => expect(stagedFiles(dir)).toEqual([]), { timeout: 60_000 });
  });
});

/**
 * The apply tells "unchanged since the dry-run" from each file's stat as the dry-run took it with
 * the bytes (file-stat.ts), and reads the file again only where the stat cannot vouch for it.
 */
describe('stillFits: the stat vouches, else the bytes', () => {
  const REL = 'site/css/site.css';
  /** A kept proposal changing REL, its source as read now (readAt: when the read is said to have started). */
  function keptFor(dir: string, readAt: number): KeptProposal {
    const { bytes, stat } = readWithStat(path.join(dir, REL));
    const sources = new Map([[REL, { blob: gitBlobId(bytes), stat, readAt }]]);
    const proposed = { matched: [REL], baseline: {}, units: 1, changes: new Map([[REL, 'x']]), changed: [REL], notes: [], patch: '', sources };
    return { key: 'k', root: dir, patchSha256: 'p', fingerprint: 'f', proposed, params: {}, verifier: null };
  }
  const longAgo = () => Date.now() + 10 * RACY_MS; // a read well after the file's last change

  it('an edit that keeps the size and sets the mtime back still moves the ctime: read again, found changed', () => {
    const dir = repo();
    const file = path.join(dir, REL);
    const kept = keptFor(dir, longAgo());
    const { mtime } = fs.statSync(file);
    const same = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, same.replace('@import', '@IMPORT'));
    fs.utimesSync(file, mtime, mtime);
    expect(stillFits(kept, dir, 'f')).toEqual({ ok: false, why: `${REL} changed since the dry-run` });
  });

  it('an untouched file fits on its stat (its bytes are not read: a forged blob id goes unseen), a racily new one only on its bytes', () => {
    const dir = repo();
    const trusted = keptFor(dir, longAgo());
    trusted.proposed.sources.get(REL)!.blob = 'f'.repeat(40);
    const fits = stillFits(trusted, dir, 'f');
    expect(fits).toMatchObject({ ok: true });
    expect(fits.ok && fits.originals.get(REL)).toEqual({ blob: 'f'.repeat(40), mode: fs.statSync(path.join(dir, REL)).mode & 0o7777 });
    // Read within RACY_MS of its last change: the stat cannot vouch, the bytes are compared.
    const racy = keptFor(dir, fs.statSync(path.join(dir, REL)).ctimeMs);
    racy.proposed.sources.get(REL)!.blob = 'f'.repeat(40);
    expect(stillFits(racy, dir, 'f')).toEqual({ ok: false, why: `${REL} changed since the dry-run` });
    expect(stillFits(keptFor(dir, fs.statSync(path.join(dir, REL)).ctimeMs), dir, 'f')).toMatchObject({ ok: true });
  });

  it('HEAD or the status moved: no file is looked at', () => {
    const dir = repo();
    expect(stillFits(keptFor(dir, longAgo()), dir, 'other')).toEqual({ ok: false, why: 'HEAD or the status changed since the dry-run' });
  });
});
